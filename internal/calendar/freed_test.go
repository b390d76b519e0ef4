package calendar_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestDeletedEventOffered: a busy event in the staff member's Radicale
// calendar blocks 10:00–11:00; a person waits for Monday morning. Syncs
// that free nothing (unchanged, an event added) offer nothing; once the
// event is deleted in Radicale, the next sync offers the person 10:00
// (a held offer, its e-mail and waitlist.offered webhook queued), as
// app.NewAuthServices wires calendar.Service.Freed (docs/calendars.md
// "Freed time"). A sync after it offers nothing more.
func TestDeletedEventOffered(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		freed := app.SpanFreed(app.NewMutations(s, f.engine, nil, n, f.clock.Now))
		var calls int
		f.cals.Freed = func(ctx context.Context, businessID, staffID string, start, end time.Time) error {
			calls++
			err := freed(ctx, businessID, staffID, start, end)
			if err != nil {
				t.Errorf("offering freed time: %v", err)
			}
			return err
		}
		if err := s.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: f.cat.Business.ID,
			URL: "https://hooks.example/linkslot", Events: []string{notify.EventWaitlistOffered}, SecretEncrypted: []byte("x"),
			Enabled: true, CreatedAt: f.clock.Now(), UpdatedAt: f.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		f.connect(t, r)
		put(t, r, "walkin.ics", `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:walkin-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260323T100000
DTEND;TZID=Europe/Berlin:20260323T110000
SUMMARY:Walk-in
END:VEVENT
END:VCALENDAR
`)
		sync := func() []string {
			t.Helper()
			f.clock.Add(time.Minute)
			res, err := f.cals.Sync(ctx, f.staffID())
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, sp := range res.Freed {
				out = append(out, sp.Start.In(berlin).Format("01-02 15:04")+"–"+sp.End.In(berlin).Format("15:04"))
			}
			return out
		}
		if fr := sync(); len(fr) != 0 {
			t.Fatalf("the first sync freed %v", fr)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || has(sl, "10:30") || !has(sl, "09:00") {
			t.Fatalf("the walk-in does not block: %v", sl)
		}
		now := f.clock.Now()
		if err := s.InsertWaitlistEntry(ctx, store.WaitlistEntry{ID: store.NewID("wle"), Reference: "WL-CAL1", AccountID: f.person.ID,
			BusinessID: f.cat.Business.ID, ServiceID: f.cat.Services[0].ID, StaffID: f.staffID(), FromDate: "2026-03-23", ToDate: "2026-03-23",
			EarliestMin: 10 * 60, LatestMin: 11 * 60, Status: store.WaitlistWaiting, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}

		// Nothing freed: an unchanged calendar, then an event added.
		if fr := sync(); len(fr) != 0 {
			t.Fatalf("an unchanged sync freed %v", fr)
		}
		put(t, r, "supplier.ics", `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:supplier-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260323T140000
DTEND;TZID=Europe/Berlin:20260323T150000
SUMMARY:Supplier
END:VEVENT
END:VCALENDAR
`)
		if fr := sync(); len(fr) != 0 {
			t.Fatalf("adding an event freed %v", fr)
		}
		if calls != 0 || countRows(t, s, "waitlist_offers", "") != 0 {
			t.Fatalf("%d calls, %d offers before anything was freed", calls, countRows(t, s, "waitlist_offers", ""))
		}

		// The walk-in is deleted in Radicale: the next sync offers 10:00.
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/walkin.ics"); err != nil {
			t.Fatal(err)
		}
		if fr := sync(); len(fr) != 1 || fr[0] != "03-23 10:00–11:00" {
			t.Fatalf("deleting the walk-in freed %v", fr)
		}
		wantHeldOffer(t, f, time.Date(2026, 3, 23, 10, 0, 0, 0, berlin))
		if n := countRows(t, s, "outbox_messages", "channel = 'webhook' AND topic = '"+notify.EventWaitlistOffered+"'"); n != 1 {
			t.Fatalf("%d offer webhooks", n)
		}
		// Held: not open to anyone else.
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || !has(sl, "10:30") {
			t.Fatalf("after the offer: %v", sl)
		}

		// Deleting the supplier's event frees time nobody waits for.
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/supplier.ics"); err != nil {
			t.Fatal(err)
		}
		if fr := sync(); len(fr) != 1 || fr[0] != "03-23 14:00–15:00" {
			t.Fatalf("deleting the supplier freed %v", fr)
		}
		if fr := sync(); len(fr) != 0 {
			t.Fatalf("an unchanged sync freed %v", fr)
		}
		// A moved event frees the part of its old time it left.
		put(t, r, "late.ics", lateEvent("20260324T100000", "20260324T110000"))
		if fr := sync(); len(fr) != 0 {
			t.Fatalf("adding an event freed %v", fr)
		}
		put(t, r, "late.ics", lateEvent("20260324T103000", "20260324T113000"))
		if fr := sync(); len(fr) != 1 || fr[0] != "03-24 10:00–10:30" {
			t.Fatalf("moving an event freed %v", fr)
		}
		if calls != 3 || countRows(t, s, "waitlist_offers", "") != 1 {
			t.Fatalf("%d calls, %d offers", calls, countRows(t, s, "waitlist_offers", ""))
		}
	})
}

func lateEvent(start, end string) string {
	return `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:late-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:` + start + `
DTEND;TZID=Europe/Berlin:` + end + `
SUMMARY:Late
END:VEVENT
END:VCALENDAR
`
}

// TestICSMovedEventOffered: an iCalendar URL, read whole, whose event
// moves from 12:00–13:00 to 12:30–13:30 frees 12:00–12:30, which the
// person waiting for it is offered.
func TestICSMovedEventOffered(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		f.cals.Freed = app.SpanFreed(app.NewMutations(s, f.engine, nil, n, f.clock.Now))
		version, start, end := 1, "20260323T120000", "20260323T130000"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", fmt.Sprintf(`"v%d"`, version))
			w.Header().Set("Content-Type", "text/calendar")
			w.Write([]byte(strings.ReplaceAll(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:ics-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:`+start+`
DTEND;TZID=Europe/Berlin:`+end+`
END:VEVENT
END:VCALENDAR
`, "\n", "\r\n")))
		}))
		defer srv.Close()
		if err := f.cals.Set(ctx, calendar.Connect{StaffID: f.staffID(), BusinessID: f.cat.Business.ID, Kind: store.CalendarICS,
			URL: srv.URL + "/mia.ics"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		now := f.clock.Now()
		if err := s.InsertWaitlistEntry(ctx, store.WaitlistEntry{ID: store.NewID("wle"), Reference: "WL-ICS1", AccountID: f.person.ID,
			BusinessID: f.cat.Business.ID, ServiceID: f.cat.Services[0].ID, FromDate: "2026-03-23", ToDate: "2026-03-23",
			EarliestMin: 12 * 60, LatestMin: 13 * 60, Status: store.WaitlistWaiting, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		version, start, end = 2, "20260323T123000", "20260323T133000"
		f.clock.Add(time.Minute)
		res, err := f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Freed) != 1 || !res.Freed[0].Start.Equal(time.Date(2026, 3, 23, 12, 0, 0, 0, berlin)) ||
			!res.Freed[0].End.Equal(time.Date(2026, 3, 23, 12, 30, 0, 0, berlin)) {
			t.Fatalf("freed %+v", res.Freed)
		}
		var starts []time.Time
		if err := s.DB().Raw("SELECT starts_at FROM waitlist_offers WHERE status = ?", store.OfferHeld).Scan(&starts).Error; err != nil {
			t.Fatal(err)
		}
		if len(starts) != 1 || !starts[0].Equal(time.Date(2026, 3, 23, 12, 0, 0, 0, berlin)) {
			t.Fatalf("offers %v", starts)
		}
	})
}

func countRows(t *testing.T, s *sqlstore.Store, table, where string) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	if err := s.DB().Raw(q).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDisconnectOffered: disconnecting a staff member's calendar
// (admin.Service.RemoveStaffCalendar, wired with Freed as
// app.NewAuthServices and app.AdminService do) drops its busy times, and
// the time they blocked from now on is offered to the person waiting for
// it, after the disconnect committed, as a sync that frees it would.
func TestDisconnectOffered(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		freed := app.SpanFreed(app.NewMutations(s, f.engine, nil, n, f.clock.Now))
		var spans []string
		adm, err := admin.New(admin.Config{Store: s, Clock: f.clock.Now, Calendars: f.cals,
			Freed: func(ctx context.Context, businessID, staffID string, start, end time.Time) error {
				spans = append(spans, start.In(berlin).Format("01-02 15:04")+"–"+end.In(berlin).Format("15:04"))
				if businessID != f.cat.Business.ID || staffID != f.staffID() {
					t.Errorf("freed for %s/%s", businessID, staffID)
				}
				return freed(ctx, businessID, staffID, start, end)
			}})
		if err != nil {
			t.Fatal(err)
		}
		f.connect(t, r)
		put(t, r, "walkin.ics", event("walkin-1", "20260323T100000"))
		put(t, r, "supplier.ics", event("supplier-1", "20260323T103000"))
		put(t, r, "past.ics", event("past-1", "20260319T150000"))
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || has(sl, "11:00") || !has(sl, "11:30") {
			t.Fatalf("the events do not block: %v", sl)
		}
		now := f.clock.Now()
		if err := s.InsertWaitlistEntry(ctx, store.WaitlistEntry{ID: store.NewID("wle"), Reference: "WL-DIS1", AccountID: f.person.ID,
			BusinessID: f.cat.Business.ID, ServiceID: f.cat.Services[0].ID, StaffID: f.staffID(), FromDate: "2026-03-23", ToDate: "2026-03-23",
			EarliestMin: 10 * 60, LatestMin: 11 * 60, Status: store.WaitlistWaiting, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(time.Minute)
		if err := adm.RemoveStaffCalendar(ctx, admin.Actor{ID: admin.ActorCLI}, "biz-kiez", "stf-mia"); err != nil {
			t.Fatal(err)
		}
		// The two events, merged, from now on only (not 19 March's).
		if strings.Join(spans, " ") != "03-23 10:00–11:30" {
			t.Fatalf("freed %v", spans)
		}
		if _, err := s.GetStaffCalendar(ctx, f.staffID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the calendar is still connected: %v", err)
		}
		wantHeldOffer(t, f, time.Date(2026, 3, 23, 10, 0, 0, 0, berlin))
		// Held for the person; the rest of the freed time is open.
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || !has(sl, "10:30") || !has(sl, "11:00") {
			t.Fatalf("after the disconnect: %v", sl)
		}
		if n := countRows(t, s, "audit_events", "action = 'calendar.remove'"); n != 1 {
			t.Fatalf("%d audit events", n)
		}
	})
}

// wantHeldOffer fails unless the one waitlist offer is held at start and
// its e-mail to the waiting person is queued, once.
func wantHeldOffer(t *testing.T, f *fixture, start time.Time) {
	t.Helper()
	var offer struct {
		StartsAt time.Time
		Status   string
	}
	if err := f.s.DB().Raw("SELECT starts_at, status FROM waitlist_offers").Scan(&offer).Error; err != nil {
		t.Fatal(err)
	}
	if !offer.StartsAt.Equal(start) || offer.Status != store.OfferHeld {
		t.Fatalf("offer: %+v, want held at %s", offer, start)
	}
	if n := countRows(t, f.s, "outbox_messages", "channel = 'email' AND topic = '"+notify.EventWaitlistOffered+"' AND recipient = '"+f.person.Email+"'"); n != 1 {
		t.Fatalf("%d offer e-mails", n)
	}
}
