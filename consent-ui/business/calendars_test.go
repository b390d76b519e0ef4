package businessui_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestCalendarsPage connects the staff member's calendar to a real
// Radicale through the console's Calendars page (docs/reference.md §16),
// as the owner: the page shows its kind, URL and user name, never the
// password, and its last sync; with Radicale down, Sync now shows the
// last error word for word and that availability still uses the last good
// sync; with Radicale back, Sync now moves Last synced and clears the
// error. The staff member sees their own calendar only. Changes are
// audited with the owner as the actor; reminders are set and turned off.
func TestCalendarsPage(t *testing.T) {
	rad := testkit.StartRadicale(t)
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		owner := e.signIn(demo.OwnerEmail)
		staff := e.signIn(demo.StaffEmail)
		dana := e.staff(demo.MemberStaff)
		base := "/business/" + demo.MemberBusiness
		page := base + "/calendars"

		resp, body := owner.get(page)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "No connected calendar.") || !strings.Contains(body, "24h, 2h") {
			t.Fatalf("calendars page before: %d\n%s", resp.StatusCode, body)
		}

		// Connect Dana's CalDAV calendar.
		resp, body = owner.post(page+"/"+dana.Reference, url.Values{"kind": {"caldav"}, "url": {rad.URL()},
			"username": {rad.User}, "password": {rad.Password}})
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "done=calendar-set") {
			t.Fatalf("connect: %d %s\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
		}
		first, err := s.GetStaffCalendar(ctx, dana.ID)
		if err != nil || first.SyncedAt == nil || first.LastError != "" {
			t.Fatalf("after connect: %+v %v", first, err)
		}
		_, body = owner.get(page)
		loc := e.loc
		for _, want := range []string{"CalDAV (read and written)", rad.URL(), rad.User, "Last synced", first.SyncedAt.In(loc).Format("Mon 2 Jan 2006 15:04 MST")} {
			if !strings.Contains(body, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if strings.Contains(body, rad.Password) {
			t.Fatalf("the page shows the calendar's password")
		}
		evs, _ := s.ListAuditEvents(ctx, 10, 0)
		ownerAcct, _ := s.GetAccountByEmail(ctx, demo.OwnerEmail)
		if len(evs) == 0 || evs[0].Action != "calendar.set" || evs[0].ActorID != ownerAcct.ID || strings.Contains(string(evs[0].After), rad.Password) {
			t.Fatalf("audit: %+v", evs)
		}

		// Radicale down: the last error, word for word.
		rad.Stop()
		time.Sleep(10 * time.Millisecond)
		resp, _ = owner.post(page+"/"+dana.Reference+"/sync", nil)
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "done=calendar-sync-failed") {
			t.Fatalf("sync with radicale down: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		failed, _ := s.GetStaffCalendar(ctx, dana.ID)
		if failed.LastError == "" || !failed.SyncedAt.Equal(*first.SyncedAt) {
			t.Fatalf("after a failed sync: %+v", failed)
		}
		_, body = owner.get(page + "?done=calendar-sync-failed")
		if !strings.Contains(body, template(failed.LastError)) ||
			!strings.Contains(body, "Availability still uses the sync of "+first.SyncedAt.In(loc).Format("Mon 2 Jan 2006 15:04 MST")+".") {
			t.Fatalf("the page does not show the last error %q:\n%s", failed.LastError, body)
		}

		// Radicale back: Sync now moves Last synced.
		rad.Start()
		time.Sleep(1100 * time.Millisecond) // a later second than the first sync
		resp, _ = owner.post(page+"/"+dana.Reference+"/sync", nil)
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "done=calendar-synced") {
			t.Fatalf("sync: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		again, _ := s.GetStaffCalendar(ctx, dana.ID)
		if again.LastError != "" || again.SyncedAt == nil || !again.SyncedAt.After(*first.SyncedAt) {
			t.Fatalf("after Sync now: %+v (first %v)", again, first.SyncedAt)
		}
		_, body = owner.get(page)
		if strings.Contains(body, "Last sync failed") || !strings.Contains(body, again.SyncedAt.In(loc).Format("Mon 2 Jan 2006 15:04 MST")) {
			t.Fatalf("the page after Sync now:\n%s", body)
		}

		// The staff member sees their own calendar, not Marcus's; they
		// cannot set reminders.
		marcus := e.staff("stf-marcus-reid")
		resp, body = staff.get(page)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, rad.URL()) || strings.Contains(body, "Marcus Reid") || strings.Contains(body, "Save the reminders") {
			t.Fatalf("staff page: %d\n%s", resp.StatusCode, body)
		}
		if resp, _ := staff.post(page+"/"+marcus.Reference+"/sync", nil); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("staff syncs Marcus's calendar: %d", resp.StatusCode)
		}

		// Reminders: refused input changes nothing; off; back.
		if resp, body := owner.post(base+"/reminders", url.Values{"before": {"1m"}}); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Nothing was changed") {
			t.Fatalf("reminders 1m: %d", resp.StatusCode)
		}
		if resp, _ := owner.post(base+"/reminders", url.Values{"before": {"off"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("reminders off: %d", resp.StatusCode)
		}
		if offs, _ := s.ReminderOffsets(ctx, e.cat.Business.ID); len(offs) != 0 {
			t.Fatalf("reminders after off: %v", offs)
		}
		if resp, _ := owner.post(base+"/reminders", url.Values{"before": {"48h, 90m"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("reminders 48h, 90m: %d", resp.StatusCode)
		}
		if _, body := owner.get(page); !strings.Contains(body, "48h, 90m") {
			t.Fatalf("the page does not show the reminders")
		}

		// Disconnect needs its confirmation.
		if resp, _ := owner.post(page+"/"+dana.Reference+"/disconnect", nil); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("disconnect unconfirmed: %d", resp.StatusCode)
		}
		if _, err := s.GetStaffCalendar(ctx, dana.ID); err != nil {
			t.Fatalf("an unconfirmed disconnect removed the calendar: %v", err)
		}
		if resp, _ := owner.post(page+"/"+dana.Reference+"/disconnect", url.Values{"confirm": {"yes"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("disconnect: %d", resp.StatusCode)
		}
		if _, err := s.GetStaffCalendar(ctx, dana.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after disconnect: %v", err)
		}
	})
}

// template is s as html/template writes it in text.
func template(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}
