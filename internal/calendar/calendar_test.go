package calendar_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	goical "github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

var ctx = context.Background()

var berlin = mustZone("Europe/Berlin")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

var secret = []byte("0123456789abcdef0123456789abcdef-test-secret")

// fixture is a business in Berlin open every day 09:00–17:00 with one staff
// member, a person, the booking engine, the notifier and the calendars on
// one store and one clock (Friday 20 March 2026, a week before the clocks
// go forward).
type fixture struct {
	s      *sqlstore.Store
	clock  *testkit.Clock
	cat    store.Catalog
	person store.Account
	engine *booking.Service
	n      *notify.Notifier
	cals   *calendar.Service
	worker *outbox.Worker
}

func newFixture(t *testing.T, s *sqlstore.Store) *fixture { return newFixtureB(t, s) }

func newFixtureB(t testing.TB, s *sqlstore.Store) *fixture {
	t.Helper()
	var hours []store.HoursWindow
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 9 * 60, EndMin: 17 * 60})
	}
	cat, err := s.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "biz-kiez", Name: "Kiez Barbers", Category: store.CategoryAppointment,
			City: "Berlin", Address: "Oranienstr. 1", TimeZone: "Europe/Berlin", AgentBooking: true, Currency: "EUR",
			HorizonDays: 90, SlotIntervalMinutes: 30},
		Services:     []store.Service{{Reference: "svc-cut", Name: "Haircut", DurationMinutes: 30, PriceCents: 2500, Currency: "EUR"}},
		Staff:        []store.Staff{{Reference: "stf-mia", Name: "Mia", ServiceIDs: []string{"svc-cut"}}},
		OpeningHours: hours,
		StaffHours:   map[string][]store.HoursWindow{"stf-mia": hours},
	})
	if err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Date(2026, 3, 20, 7, 0, 0, 0, time.UTC))
	p := store.Account{ID: store.NewID("acc"), Email: "pat@example.com", PasswordHash: "x", CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
	if err := s.CreateAccount(ctx, p); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(notify.Options{Issuer: "https://auth.linkslot.test", Clock: clock.Now, MailOff: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, clock: clock, cat: cat, person: p, engine: booking.NewService(s, clock.Now), n: n}
	f.cals = &calendar.Service{Store: s, Sealer: calendar.NewSealer(secret), Host: n.Host(), Development: true, Clock: clock.Now,
		Timeout: 5 * time.Second}
	f.worker = &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelCalendar: f.cals.Deliverer()},
		Clock: clock.Now, Rand: func() float64 { return 0 }}
	return f
}

func (f *fixture) staffID() string { return f.cat.Staff[0].ID }

func (f *fixture) connect(t *testing.T, r *testkit.Radicale) { f.connectB(t, r) }

func (f *fixture) connectB(t testing.TB, r *testkit.Radicale) {
	t.Helper()
	if err := f.cals.Set(ctx, calendar.Connect{StaffID: f.staffID(), BusinessID: f.cat.Business.ID, Kind: store.CalendarCalDAV,
		URL: r.URL(), Username: r.User, Password: r.Password}); err != nil {
		t.Fatal(err)
	}
}

// book creates a booking through the engine with its notifications in one
// transaction, as the mutation service does.
func (f *fixture) book(t *testing.T, start time.Time) (store.Booking, error) {
	t.Helper()
	p, err := f.engine.PlanCreate(ctx, booking.CreateRequest{AccountID: f.person.ID, BusinessRef: "biz-kiez", ServiceRef: "svc-cut", StartsAt: start})
	if err != nil {
		return store.Booking{}, err
	}
	var b store.Booking
	err = f.s.InTx(ctx, func(tx store.Store) error {
		var err error
		if b, err = f.engine.Create(ctx, tx, p); err != nil {
			return err
		}
		p.Facts.BookingReference, p.Facts.BookingVersion = b.Reference, b.Version
		_, err = f.n.BookingChanged(ctx, tx, notify.Change{Facts: p.Facts, Booking: b})
		return err
	})
	return b, err
}

func (f *fixture) move(t *testing.T, b store.Booking, start time.Time) store.Booking {
	t.Helper()
	p, err := f.engine.PlanReschedule(ctx, booking.RescheduleRequest{AccountID: f.person.ID, BookingRef: b.Reference, NewStartsAt: start})
	if err != nil {
		t.Fatal(err)
	}
	err = f.s.InTx(ctx, func(tx store.Store) error {
		if b, err = f.engine.Reschedule(ctx, tx, p); err != nil {
			return err
		}
		_, err = f.n.BookingChanged(ctx, tx, notify.Change{Facts: p.Facts, Booking: b})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) cancel(t *testing.T, b store.Booking) store.Booking {
	t.Helper()
	p, err := f.engine.PlanCancel(ctx, booking.CancelRequest{AccountID: f.person.ID, BookingRef: b.Reference})
	if err != nil {
		t.Fatal(err)
	}
	err = f.s.InTx(ctx, func(tx store.Store) error {
		if b, err = f.engine.Cancel(ctx, tx, p); err != nil {
			return err
		}
		_, err = f.n.BookingChanged(ctx, tx, notify.Change{Facts: p.Facts, Booking: b})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deliver runs the outbox worker once and answers what it leased.
func (f *fixture) deliver(t *testing.T) int {
	t.Helper()
	n, err := f.worker.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// slots lists the local start times (15:04) of a day's open slots.
func (f *fixture) slots(t *testing.T, day string) []string {
	t.Helper()
	a, err := f.engine.Availability(ctx, booking.AvailabilityQuery{BusinessRef: "biz-kiez", ServiceRef: "svc-cut", LocalDate: day})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sl := range a.Staff[0].Slots {
		out = append(out, sl.StartsAt.In(berlin).Format("15:04"))
	}
	return out
}

func has(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// client is a CalDAV client of the test's own, as a calendar app would be.
func client(t testing.TB, r *testkit.Radicale) *caldav.Client {
	t.Helper()
	c, err := caldav.NewClient(webdav.HTTPClientWithBasicAuth(nil, r.User, r.Password), r.URL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func put(t testing.TB, r *testkit.Radicale, name, ics string) {
	t.Helper()
	cal, err := goical.NewDecoder(strings.NewReader(strings.ReplaceAll(ics, "\n", "\r\n"))).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, r).PutCalendarObject(ctx, "/"+r.User+"/work/"+name, cal); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, r *testkit.Radicale, b store.Booking) (*goical.Event, error) {
	t.Helper()
	co, err := client(t, r).GetCalendarObject(ctx, "/"+r.User+"/work/"+b.Reference+".ics")
	if err != nil {
		return nil, err
	}
	evs := co.Data.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events in the object", len(evs))
	}
	return &evs[0], nil
}

// TestCalDAVWritesBookings: a booking made through Linkslot appears in the
// staff member's Radicale calendar, moves with it and goes when it is
// cancelled; its event is not read back as a busy time.
func TestCalDAVWritesBookings(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		f.connect(t, r)
		start := time.Date(2026, 3, 23, 10, 0, 0, 0, berlin)
		b, err := f.book(t, start)
		if err != nil {
			t.Fatal(err)
		}
		if n := f.deliver(t); n != 1 {
			t.Fatalf("%d calendar messages", n)
		}
		ev, err := get(t, r, b)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := ev.Props.Text(goical.PropUID)
		st, _ := ev.DateTimeStart(berlin)
		status, _ := ev.Status()
		if uid != b.Reference+"@auth.linkslot.test" || !st.Equal(start) || status != goical.EventConfirmed {
			t.Fatalf("UID %q start %v status %q", uid, st, status)
		}
		// Synced back, Linkslot's own event is no busy time.
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.GetStaffCalendar(ctx, f.staffID()); c.Busy != 0 || c.Objects != 1 {
			t.Fatalf("after the sync: %d objects, %d busy times", c.Objects, c.Busy)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || !has(sl, "10:30") {
			t.Fatalf("slots %v", sl)
		}

		moved := time.Date(2026, 3, 24, 15, 30, 0, 0, berlin)
		b = f.move(t, b, moved)
		f.deliver(t)
		ev, err = get(t, r, b)
		if err != nil {
			t.Fatal(err)
		}
		st, _ = ev.DateTimeStart(berlin)
		seq, _ := ev.Props.Get(goical.PropSequence).Int()
		if !st.Equal(moved) || seq != 2 {
			t.Fatalf("moved: start %v sequence %d", st, seq)
		}
		// The same message delivered again writes nothing twice.
		if err := f.cals.Write(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if files, err := webdavClient(t, r).ReadDir(ctx, "/"+r.User+"/work/", false); err != nil || len(files) != 2 {
			t.Fatalf("%d entries in the calendar, want itself and one object (%v)", len(files), err)
		}

		f.cancel(t, b)
		f.deliver(t)
		if _, err := get(t, r, b); err == nil {
			t.Fatal("the cancelled booking is still in the calendar")
		}
		if e, _ := s.GetCalendarEvent(ctx, b.ID); !e.Removed || e.Version != 3 {
			t.Fatalf("calendar event %+v", e)
		}
	})
}

// TestCalDAVBusyTimes: events put into Radicale remove slots after a sync:
// a one-off event, a weekly one across the change to summer time (same
// local hour on both sides), an instance removed by EXDATE, a moved
// instance, an all-day event; a transparent event blocks nothing. An
// incremental sync fetches only what changed.
func TestCalDAVBusyTimes(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
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
		put(t, r, "weekly.ics", `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:weekly-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260320T140000
DTEND;TZID=Europe/Berlin:20260320T150000
RRULE:FREQ=WEEKLY;BYDAY=FR;COUNT=10
EXDATE;TZID=Europe/Berlin:20260403T140000
SUMMARY:Supplier
END:VEVENT
BEGIN:VEVENT
UID:weekly-1
DTSTAMP:20260301T000000Z
RECURRENCE-ID;TZID=Europe/Berlin:20260417T140000
DTSTART;TZID=Europe/Berlin:20260417T090000
DTEND;TZID=Europe/Berlin:20260417T100000
SUMMARY:Supplier (early)
END:VEVENT
END:VCALENDAR
`)
		put(t, r, "holiday.ics", `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:holiday-1
DTSTAMP:20260301T000000Z
DTSTART;VALUE=DATE:20260325
DTEND;VALUE=DATE:20260326
SUMMARY:Closed
END:VEVENT
END:VCALENDAR
`)
		put(t, r, "free.ics", `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:free-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260323T130000
DTEND;TZID=Europe/Berlin:20260323T140000
TRANSP:TRANSPARENT
SUMMARY:Reminder to self
END:VEVENT
END:VCALENDAR
`)
		if sl := f.slots(t, "2026-03-23"); !has(sl, "10:00") {
			t.Fatalf("before the sync: %v", sl)
		}
		res, err := f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		if res.Objects != 4 {
			t.Fatalf("first sync fetched %d objects", res.Objects)
		}
		day := f.slots(t, "2026-03-23")
		if has(day, "10:00") || has(day, "10:30") || !has(day, "11:00") || !has(day, "13:00") {
			t.Fatalf("23 March: %v", day)
		}
		for _, d := range []string{"2026-03-27", "2026-04-10"} { // CET, then CEST
			if sl := f.slots(t, d); has(sl, "14:00") || has(sl, "14:30") || !has(sl, "15:00") || !has(sl, "13:30") {
				t.Fatalf("%s: %v", d, sl)
			}
		}
		if sl := f.slots(t, "2026-04-03"); !has(sl, "14:00") {
			t.Fatalf("3 April (EXDATE): %v", sl)
		}
		if sl := f.slots(t, "2026-04-17"); !has(sl, "14:00") || has(sl, "09:00") {
			t.Fatalf("17 April (moved instance): %v", sl)
		}
		if sl := f.slots(t, "2026-03-25"); len(sl) != 0 {
			t.Fatalf("25 March (all day): %v", sl)
		}
		// A booking cannot be made over a busy time either.
		if _, err := f.book(t, time.Date(2026, 3, 23, 10, 0, 0, 0, berlin)); err == nil {
			t.Fatal("booked over the walk-in")
		}

		// Incremental: the walk-in is deleted in the calendar.
		if err := webdavClient(t, r).RemoveAll(ctx, "/"+r.User+"/work/walkin.ics"); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(time.Minute)
		res, err = f.cals.Sync(ctx, f.staffID())
		if err != nil {
			t.Fatal(err)
		}
		if res.Objects != 0 || res.Removed != 1 {
			t.Fatalf("incremental sync: %+v", res)
		}
		if sl := f.slots(t, "2026-03-23"); !has(sl, "10:00") {
			t.Fatalf("after the walk-in went: %v", sl)
		}
	})
}

func webdavClient(t testing.TB, r *testkit.Radicale) *webdav.Client {
	c, err := webdav.NewClient(webdav.HTTPClientWithBasicAuth(nil, r.User, r.Password), r.URL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCalendarDown: with Radicale stopped, bookings are still made; their
// events are written once it is back.
func TestCalendarDown(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		f.connect(t, r)
		r.Stop()
		b, err := f.book(t, time.Date(2026, 3, 23, 11, 0, 0, 0, berlin))
		if err != nil {
			t.Fatalf("a booking with the calendar down: %v", err)
		}
		f.deliver(t)
		m, _ := s.GetMessage(ctx, "cal_1_"+b.ID)
		if m.Status != store.OutboxQueued || m.LastError == "" {
			t.Fatalf("with the calendar down: %+v", m)
		}
		if res, err := f.cals.Sync(ctx, f.staffID()); err == nil {
			t.Fatalf("a sync with the calendar down: %+v", res)
		}
		r.Start()
		f.clock.Add(15 * time.Second) // past the first retry's backoff
		if n := f.deliver(t); n != 1 {
			t.Fatalf("%d messages retried", n)
		}
		if _, err := get(t, r, b); err != nil {
			t.Fatalf("not written once the calendar is back: %v", err)
		}
		if m, _ := s.GetMessage(ctx, "cal_1_"+b.ID); m.Status != store.OutboxDelivered {
			t.Fatalf("message %+v", m)
		}
	})
}

// TestBadCalendars: each bad calendar is a clear last error with what to
// fix, without the password, and the busy times of the last good sync
// stay.
func TestBadCalendars(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		r := testkit.StartRadicale(t)
		f := newFixture(t, s)
		reg := prometheus.NewRegistry()
		f.cals.Metrics = calendar.NewMetrics(reg)
		f.connect(t, r)
		put(t, r, "walkin.ics", "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//EN\nBEGIN:VEVENT\nUID:w\nDTSTAMP:20260301T000000Z\n"+
			"DTSTART:20260323T090000Z\nDTEND:20260323T100000Z\nEND:VEVENT\nEND:VCALENDAR\n")
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		good, _ := s.GetStaffCalendar(ctx, f.staffID())
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(6 * time.Second) }))
		defer slow.Close()
		garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			w.Write([]byte("BEGIN:VCALENDAR\r\nthis is not iCalendar\r\n"))
		}))
		defer garbage.Close()
		huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			chunk := []byte(strings.Repeat("X-FILLER:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", 1000))
			for i := 0; i < (calendar.MaxBytes/len(chunk))+2; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		defer huge.Close()
		for _, c := range []struct {
			name string
			set  calendar.Connect
			want string
		}{
			{"wrong password", calendar.Connect{Kind: store.CalendarCalDAV, URL: r.URL(), Username: r.User, Password: "wrong-password"}, "user name or password"},
			{"not a calendar", calendar.Connect{Kind: store.CalendarCalDAV, URL: strings.TrimSuffix(r.URL(), "work/"), Username: r.User, Password: r.Password}, "not a calendar"},
			{"no such calendar", calendar.Connect{Kind: store.CalendarCalDAV, URL: r.URL() + "nothing/", Username: r.User, Password: r.Password}, "Nothing was found"},
			{"slow", calendar.Connect{Kind: store.CalendarICS, URL: slow.URL + "/cal.ics"}, "did not answer"},
			{"does not parse", calendar.Connect{Kind: store.CalendarICS, URL: garbage.URL + "/cal.ics"}, "does not answer an iCalendar file"},
			{"huge", calendar.Connect{Kind: store.CalendarICS, URL: huge.URL + "/cal.ics"}, "more than 32 MiB"},
		} {
			t.Run(c.name, func(t *testing.T) {
				// A failed sync of a calendar set anew keeps the busy times
				// it had: set, and keep the previous calendar's rows, by
				// writing the failure over the good calendar's state.
				c.set.StaffID, c.set.BusinessID = f.staffID(), f.cat.Business.ID
				if err := f.cals.Set(ctx, c.set); err != nil {
					t.Fatal(err)
				}
				// Give it the good sync's busy times, as if it had synced before.
				f.restore(t, good, r)
				_, err := f.cals.Sync(ctx, f.staffID())
				var p *calendar.Problem
				if !errors.As(err, &p) || !strings.Contains(p.Message, c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				got, _ := s.GetStaffCalendar(ctx, f.staffID())
				if got.LastError != p.Message || strings.Contains(got.LastError, r.Password) || strings.Contains(got.LastError, "wrong-password") {
					t.Fatalf("last error %q", got.LastError)
				}
				if sl := f.slots(t, "2026-03-23"); has(sl, "10:00") || !has(sl, "11:00") {
					t.Fatalf("the last good busy times are gone: %v", sl)
				}
			})
		}
		// Each failure counted by kind; the good first sync as changed.
		if got := []float64{metricValue(t, reg, "linkslot_calendar_syncs_total", "caldav", "failed"),
			metricValue(t, reg, "linkslot_calendar_syncs_total", "ics", "failed"),
			metricValue(t, reg, "linkslot_calendar_syncs_total", "caldav", "changed")}; got[0] != 3 || got[1] != 3 || got[2] != 1 {
			t.Fatalf("syncs counted caldav failed, ics failed, caldav changed = %v, want 3 3 1", got)
		}
	})
}

// metricValue answers the value of the counter, or the sample count of the
// histogram, called name with the label values values (in the order of
// the collector's labels); 0 when there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, values ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
	metric:
		for _, m := range fam.GetMetric() {
			if len(m.GetLabel()) != len(values) {
				continue
			}
			for i, l := range m.GetLabel() {
				if l.GetValue() != values[i] {
					continue metric
				}
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// restore stores the busy times of the good sync again (Set drops what an
// earlier calendar stored).
func (f *fixture) restore(t *testing.T, good store.StaffCalendar, r *testkit.Radicale) {
	t.Helper()
	start := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC)
	if err := f.s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: f.staffID(), At: f.clock.Now(), Replace: true,
		CollectionTag: "", WindowStart: good.WindowStart, WindowEnd: good.WindowEnd,
		Upsert: []store.CalendarObject{{Href: "/owner/work/walkin.ics", ETag: "x", Data: "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"}},
		Busy:   []store.CalendarBusy{{Href: "/owner/work/walkin.ics", StartsAt: start, EndsAt: start.Add(time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
}

// TestICSCalendar: an iCalendar URL's busy times remove slots; read again
// unchanged (304 to If-None-Match), nothing is rewritten and they stay.
func TestICSCalendar(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := newFixture(t, s)
		body := strings.ReplaceAll(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:ics-1
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260323T120000
DTEND;TZID=Europe/Berlin:20260323T130000
END:VEVENT
END:VCALENDAR
`, "\n", "\r\n")
		var gets, notModified int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gets++
			if r.Header.Get("If-None-Match") == `"v1"` {
				notModified++
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Type", "text/calendar")
			w.Write([]byte(body))
		}))
		defer srv.Close()
		if err := f.cals.Set(ctx, calendar.Connect{StaffID: f.staffID(), BusinessID: f.cat.Business.ID, Kind: store.CalendarICS,
			URL: srv.URL + "/mia.ics"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "12:00") || has(sl, "12:30") || !has(sl, "13:00") {
			t.Fatalf("slots %v", sl)
		}
		f.clock.Add(time.Minute)
		if _, err := f.cals.Sync(ctx, f.staffID()); err != nil {
			t.Fatal(err)
		}
		c, _ := s.GetStaffCalendar(ctx, f.staffID())
		if gets != 2 || notModified != 1 || c.Busy != 1 || c.LastError != "" || !c.SyncedAt.Equal(f.clock.Now()) {
			t.Fatalf("second sync: %d GETs, %d not modified, calendar %+v", gets, notModified, c)
		}
		if sl := f.slots(t, "2026-03-23"); has(sl, "12:00") {
			t.Fatalf("after an unchanged sync: %v", sl)
		}
		// A booking through Linkslot is not written to a read-only calendar.
		if _, err := f.book(t, time.Date(2026, 3, 23, 14, 0, 0, 0, berlin)); err != nil {
			t.Fatal(err)
		}
		if n := f.deliver(t); n != 0 {
			t.Fatalf("%d calendar messages for a read-only calendar", n)
		}
	})
}
