package calendar_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestChangeKeepsPassword: changing a staff member's CalDAV calendar to
// another calendar of the same account (the same server, the same user
// name) with the password left empty keeps the stored password, and the
// new calendar syncs with it; on another host, with another user name, or
// replacing an iCalendar URL, an empty password is refused with what to
// do and the calendar stays as it was (docs/calendars.md "Connecting a
// calendar").
func TestChangeKeepsPassword(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		home := filepath.Join(filepath.Dir(r.CollectionDir()), "home")
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".Radicale.props"), []byte(`{"tag": "VCALENDAR"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		put(t, r, "walkin.ics", event("walkin-1", "20260323T100000"))
		adm, err := admin.New(admin.Config{Store: s, Clock: f.clock.Now, Calendars: f.cals})
		if err != nil {
			t.Fatal(err)
		}
		actor := admin.Actor{ID: admin.ActorCLI}
		set := func(c calendar.Connect) (admin.CalendarInfo, error) {
			return adm.SetStaffCalendar(ctx, actor, "biz-kiez", "stf-mia", c)
		}
		info, err := set(calendar.Connect{Kind: store.CalendarCalDAV, URL: r.URL(), Username: r.User, Password: r.Password})
		if err != nil || info.LastError != "" || info.BusyTimes != 1 {
			t.Fatalf("set with the password: %+v, %v", info, err)
		}
		first, _ := s.GetStaffCalendar(ctx, f.staffID())

		// The same account's other calendar, the password left empty.
		homeURL := strings.TrimSuffix(r.URL(), "work/") + "home/"
		info, err = set(calendar.Connect{Kind: store.CalendarCalDAV, URL: homeURL, Username: r.User})
		if err != nil || info.LastError != "" || info.SyncedAt == nil || info.BusyTimes != 0 || info.URL != homeURL {
			t.Fatalf("changed to the same account's other calendar without the password: %+v, %v", info, err)
		}
		kept, _ := s.GetStaffCalendar(ctx, f.staffID())
		if string(kept.PasswordSealed) != string(first.PasswordSealed) {
			t.Fatal("the stored password was not kept")
		}

		// Another host (the same server, named otherwise), another user
		// name: the password must be typed; nothing changes.
		other := strings.Replace(r.URL(), "127.0.0.1", "localhost", 1)
		for _, c := range []calendar.Connect{
			{Kind: store.CalendarCalDAV, URL: other, Username: r.User},
			{Kind: store.CalendarCalDAV, URL: r.URL(), Username: "someone-else"},
		} {
			_, err := set(c)
			var p *problem.Error
			if !errors.As(err, &p) || p.Field != "password" || !strings.Contains(p.Message, "Type the password") {
				t.Fatalf("%s as %s without the password: %v", c.URL, c.Username, err)
			}
			if got, _ := s.GetStaffCalendar(ctx, f.staffID()); got.URL != homeURL || got.Username != r.User {
				t.Fatalf("a refused change changed the calendar: %+v", got)
			}
		}

		// After an iCalendar URL there is no password to keep.
		if _, err := set(calendar.Connect{Kind: store.CalendarICS, URL: "http://127.0.0.1:1/feed.ics"}); err != nil {
			t.Fatal(err)
		}
		_, err = set(calendar.Connect{Kind: store.CalendarCalDAV, URL: r.URL(), Username: r.User})
		var p *problem.Error
		if !errors.As(err, &p) || p.Field != "password" || !strings.Contains(p.Message, "needs a user name and a password") {
			t.Fatalf("CalDAV after an iCalendar URL without the password: %v", err)
		}
	})
}
