package calendar_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	goical "github.com/emersion/go-ical"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestCalDAVDeleteIfMatch: a cancelled booking's event is deleted only as
// Linkslot wrote it (If-Match its stored ETag). One the calendar's owner
// changed since is left there, logged, and the message is done (not
// retried); one deleted in the calendar already is done too.
func TestCalDAVDeleteIfMatch(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		var logs testkit.SyncBuffer
		f.cals.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		f.connect(t, r)

		// Changed by the owner: a note added to Linkslot's event.
		edited, err := f.book(t, time.Date(2026, 3, 23, 10, 0, 0, 0, berlin))
		if err != nil {
			t.Fatal(err)
		}
		// Deleted by the owner before the booking was cancelled.
		gone, err := f.book(t, time.Date(2026, 3, 23, 12, 0, 0, 0, berlin))
		if err != nil {
			t.Fatal(err)
		}
		if n := f.deliver(t); n != 2 {
			t.Fatalf("%d calendar messages", n)
		}
		co, err := client(t, r).GetCalendarObject(ctx, "/"+r.User+"/work/"+edited.Reference+".ics")
		if err != nil {
			t.Fatal(err)
		}
		co.Data.Events()[0].Props.SetText(goical.PropDescription, "Bring the colour chart.")
		if _, err := client(t, r).PutCalendarObject(ctx, co.Path, co.Data); err != nil {
			t.Fatal(err)
		}
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/"+gone.Reference+".ics"); err != nil {
			t.Fatal(err)
		}

		f.cancel(t, edited)
		f.cancel(t, gone)
		if n := f.deliver(t); n != 2 {
			t.Fatalf("%d calendar messages after the cancellations", n)
		}
		for _, b := range []store.Booking{edited, gone} {
			if m, _ := s.GetMessage(ctx, "cal_2_"+b.ID); m.Status != store.OutboxDelivered {
				t.Fatalf("message of %s: %+v", b.Reference, m)
			}
			if e, _ := s.GetCalendarEvent(ctx, b.ID); !e.Removed || e.Version != 2 {
				t.Fatalf("calendar event of %s: %+v", b.Reference, e)
			}
		}
		ev, err := get(t, r, edited)
		if err != nil {
			t.Fatalf("the event its owner changed was deleted: %v", err)
		}
		if d, _ := ev.Props.Text(goical.PropDescription); d != "Bring the colour chart." {
			t.Fatalf("description %q", d)
		}
		if _, err := get(t, r, gone); err == nil {
			t.Fatal("the deleted event is back")
		}
		if got := logs.String(); strings.Count(got, "changed in the calendar; left there") != 1 || !strings.Contains(got, edited.ID) ||
			strings.Contains(got, r.Password) {
			t.Fatalf("log: %s", got)
		}
		if n := f.deliver(t); n != 0 {
			t.Fatalf("%d messages retried", n)
		}

		// Not changed: deleted as before.
		b, err := f.book(t, time.Date(2026, 3, 23, 14, 0, 0, 0, berlin))
		if err != nil {
			t.Fatal(err)
		}
		f.deliver(t)
		if _, err := get(t, r, b); err != nil {
			t.Fatal(err)
		}
		f.cancel(t, b)
		f.deliver(t)
		if _, err := get(t, r, b); err == nil {
			t.Fatal("the cancelled booking is still in the calendar")
		}
	})
}
