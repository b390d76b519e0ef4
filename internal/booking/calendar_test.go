package booking

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// connectCalendars gives every staff member of cat a connected calendar
// whose last sync stored perStaff busy times of 30 minutes, spread over a
// year from fixtureNow (docs/calendars.md).
func connectCalendars(t testing.TB, s *sqlstore.Store, cat store.Catalog, perStaff int) {
	t.Helper()
	ctx := context.Background()
	for _, st := range cat.Staff {
		if err := s.PutStaffCalendar(ctx, store.StaffCalendar{StaffID: st.ID, BusinessID: cat.Business.ID, Kind: store.CalendarICS,
			URL: "https://cal.example/" + st.Reference + ".ics", UpdatedAt: fixtureNow}); err != nil {
			t.Fatal(err)
		}
		busy := make([]store.CalendarBusy, perStaff)
		step := 365 * 24 * time.Hour / time.Duration(perStaff)
		for i := range busy {
			start := fixtureNow.Add(time.Duration(i) * step).Truncate(30 * time.Minute)
			busy[i] = store.CalendarBusy{Href: "feed.ics", StartsAt: start, EndsAt: start.Add(30 * time.Minute)}
		}
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: st.ID, At: fixtureNow, Replace: true,
			WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0), Busy: busy}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAvailabilityWithCalendar: busy times of a connected calendar remove
// slots, and cost no extra statement once read: one per warm answer, as
// without a calendar, and a second only when a sync changed them (a new
// busy tag), whose change the very next answer shows.
func TestAvailabilityWithCalendar(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s, bigCatalog("biz-cal", 3, 1))
		cat, err := s.LoadCatalog(ctx, "biz-cal")
		if err != nil {
			t.Fatal(err)
		}
		connectCalendars(t, s, cat, 2000)
		loc, _ := time.LoadLocation("America/Chicago")
		busyAt := time.Date(2026, 6, 3, 10, 0, 0, 0, loc)
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cat.Staff[1].ID, At: fixtureNow, CollectionTag: "t",
			WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0),
			Upsert: []store.CalendarObject{{Href: "walkin.ics", Data: "x"}},
			Busy:   []store.CalendarBusy{{Href: "walkin.ics", StartsAt: busyAt, EndsAt: busyAt.Add(time.Hour)}}}); err != nil {
			t.Fatal(err)
		}
		q := AvailabilityQuery{BusinessRef: "biz-cal", ServiceRef: "svc-00", LocalDate: "2026-06-03"}
		n := countStatements(t, s)
		// answer answers q and says how many statements it took.
		answer := func() (Availability, int64) {
			t.Helper()
			n.Store(0)
			a, err := f.svc.Availability(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return a, n.Load()
		}
		answer() // the catalog loaded (the cold path reads busy times with the bookings)
		if _, got := answer(); got != 2 {
			t.Fatalf("%d statements for the first warm answer, want 2 (the day, the calendars' busy times)", got)
		}
		a, got := answer()
		if got != 1 {
			t.Fatalf("%d statements per warm answer with connected calendars, want 1", got)
		}
		open := func(a Availability, i int, hhmm string) bool {
			for _, sl := range a.Staff[i].Slots {
				if sl.StartsAt.In(loc).Format("15:04") == hhmm {
					return true
				}
			}
			return false
		}
		if open(a, 1, "10:00") || open(a, 1, "10:30") || !open(a, 1, "11:00") || !open(a, 0, "10:00") {
			t.Fatalf("slots around the busy time: %v / %v", fmtSlots(a.Staff[0].Slots), fmtSlots(a.Staff[1].Slots))
		}
		// A sync that finds nothing new keeps the tag: still one statement.
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cat.Staff[1].ID, At: fixtureNow.Add(time.Minute), CollectionTag: "t",
			WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, got := answer(); got != 1 {
			t.Fatalf("%d statements after a sync that changed nothing, want 1", got)
		}
		// The walk-in moves to 11:00: the next answer reads the new busy
		// times and shows them.
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cat.Staff[1].ID, At: fixtureNow.Add(2 * time.Minute), CollectionTag: "t2",
			WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0),
			Upsert: []store.CalendarObject{{Href: "walkin.ics", Data: "y"}},
			Busy:   []store.CalendarBusy{{Href: "walkin.ics", StartsAt: busyAt.Add(time.Hour), EndsAt: busyAt.Add(2 * time.Hour)}}}); err != nil {
			t.Fatal(err)
		}
		moved, got := answer()
		if got != 2 || !open(moved, 1, "10:00") || open(moved, 1, "11:00") {
			t.Fatalf("after the walk-in moved (%d statements): %v", got, fmtSlots(moved.Staff[1].Slots))
		}
		// The other staff member's busy times, kept (their calendar's tag
		// did not change), still block.
		if w, g := fmt.Sprint(fmtSlots(a.Staff[0].Slots)), fmt.Sprint(fmtSlots(moved.Staff[0].Slots)); w != g {
			t.Fatalf("the unchanged calendar's slots after the other one changed: %s, before %s", g, w)
		}
		if _, got := answer(); got != 1 {
			t.Fatalf("%d statements once the moved busy times were read, want 1", got)
		}
		// Disconnected: no busy time of that calendar blocks any more.
		if err := s.DeleteStaffCalendar(ctx, cat.Staff[1].ID); err != nil {
			t.Fatal(err)
		}
		gone, _ := answer()
		if !open(gone, 1, "11:00") || !open(gone, 1, "10:00") {
			t.Fatalf("after the calendar was disconnected: %v", fmtSlots(gone.Staff[1].Slots))
		}
		// Connected again (an empty calendar): a new tag, nothing busy.
		if err := s.PutStaffCalendar(ctx, store.StaffCalendar{StaffID: cat.Staff[1].ID, BusinessID: cat.Business.ID, Kind: store.CalendarICS,
			URL: "https://cal.example/again.ics", UpdatedAt: fixtureNow}); err != nil {
			t.Fatal(err)
		}
		again, got := answer()
		if got != 2 || !open(again, 1, "11:00") {
			t.Fatalf("after the calendar was set again (%d statements): %v", got, fmtSlots(again.Staff[1].Slots))
		}
		// The cold path (the catalog loaded again) reads them too.
		f2 := NewService(s, func() time.Time { return fixtureNow })
		a2, err := f2.Availability(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for i := range again.Staff {
			if w, g := fmtSlots(again.Staff[i].Slots), fmtSlots(a2.Staff[i].Slots); fmt.Sprint(w) != fmt.Sprint(g) {
				t.Fatalf("cold answer for staff %d: %v, warm %v", i, g, w)
			}
		}
	})
}

// BenchmarkAvailabilityConnectedCalendar: one day's answer for 20 staff
// members, each with three bookings that day, without a connected calendar
// and with one each: a 5,000-event calendar over four years, of which the
// year ahead is stored (1,250 busy times, about 3 a day), and a dense one
// with 5,000 busy times in the year ahead (about 14 a day). The two
// businesses are answered in turns in the same loop, so that a machine
// that slows down slows both: ratio is ns/op without ÷ ns/op with
// (target ≥ 0.8; docs/calendars.md "Availability"). The plain case asks a
// day whose busy times the process holds; one-changed changes one staff
// member's calendar before every call (a sync that stored something: that
// calendar's busy times are read again, the others' kept); cold forgets
// every kept day before every call (a process just started, or every
// calendar changed: all busy times of the day read).
func BenchmarkAvailabilityConnectedCalendar(b *testing.B) {
	for _, be := range sqltest.Backends() {
		for _, busy := range []int{1250, 5000} {
			for _, variant := range []string{"", "one-changed", "cold"} {
				name := be.Name + "/busy_" + strconv.Itoa(busy) + "_a_year_each"
				if variant != "" {
					name += "/" + variant
				}
				b.Run(name, func(b *testing.B) {
					plain, _ := benchStore(b, be, 20, 10, 2)
					f, cat := benchStore(b, be, 20, 10, 2)
					connectCalendars(b, f.st, cat, busy)
					ctx := context.Background()
					date := fixtureNow.AddDate(0, 0, 1).Format("2006-01-02")
					q := AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: "svc-00", LocalDate: date}
					answer := func(f *fixture) time.Duration {
						t0 := time.Now()
						if _, err := f.svc.Availability(ctx, q); err != nil {
							b.Fatal(err)
						}
						return time.Since(t0)
					}
					for range 3 {
						answer(plain)
						answer(f)
					}
					var without, with time.Duration
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						switch variant {
						case "one-changed":
							b.StopTimer()
							// An unchanged busy time in a new object: new
							// tags, the same slots.
							at := fixtureNow.AddDate(0, 0, 200)
							if err := f.st.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: cat.Staff[i%len(cat.Staff)].ID, At: fixtureNow,
								WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0),
								Upsert: []store.CalendarObject{{Href: "bench.ics", Data: "x"}},
								Busy:   []store.CalendarBusy{{Href: "bench.ics", StartsAt: at, EndsAt: at.Add(time.Hour)}}}); err != nil {
								b.Fatal(err)
							}
							b.StartTimer()
						case "cold":
							f.svc.busy.mu.Lock()
							f.svc.busy.kept = nil
							f.svc.busy.mu.Unlock()
						}
						without += answer(plain)
						with += answer(f)
					}
					b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "ns/op-without")
					b.ReportMetric(float64(with.Nanoseconds())/float64(b.N), "ns/op-with")
					b.ReportMetric(float64(without)/float64(with), "ratio")
				})
			}
		}
	}
}

// TestBusyTimeAndHeldOfferRefuseBookings: the three things that block a
// staff member's time — a booking that holds its slot, a slot held for a
// waiting person and a connected calendar's busy time — come back from
// one read, earliest first, and a booking over the busy time or over the
// held offer is refused as over a booking (docs/calendars.md,
// docs/design.md "The waitlist").
func TestBusyTimeAndHeldOfferRefuseBookings(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s)
		cat, err := s.LoadCatalog(ctx, "biz-fix")
		if err != nil {
			t.Fatal(err)
		}
		var bob store.Staff
		for _, st := range cat.Staff {
			if st.Reference == "stf-bob" {
				bob = st
			}
		}
		busyAt, offerAt := nyTime(t, "2026-06-03 10:00"), nyTime(t, "2026-06-03 14:00")
		if err := s.PutStaffCalendar(ctx, store.StaffCalendar{StaffID: bob.ID, BusinessID: cat.Business.ID, Kind: store.CalendarICS,
			URL: "https://cal.example/bob.ics", UpdatedAt: fixtureNow}); err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyCalendarSync(ctx, store.CalendarSync{StaffID: bob.ID, At: fixtureNow, Replace: true,
			WindowStart: fixtureNow, WindowEnd: fixtureNow.AddDate(1, 0, 0),
			Busy: []store.CalendarBusy{{Href: "dentist.ics", StartsAt: busyAt, EndsAt: busyAt.Add(time.Hour)}}}); err != nil {
			t.Fatal(err)
		}
		entry := store.WaitlistEntry{ID: "wle-1", Reference: "WL-1", AccountID: "acc_9", BusinessID: cat.Business.ID,
			ServiceID: cat.Services[0].ID, FromDate: "2026-06-03", ToDate: "2026-06-03", EarliestMin: 0, LatestMin: 1440,
			Status: store.WaitlistWaiting, CreatedAt: fixtureNow, UpdatedAt: fixtureNow}
		if err := s.InsertWaitlistEntry(ctx, entry); err != nil {
			t.Fatal(err)
		}
		if err := s.HoldSlot(ctx, store.WaitlistOffer{ID: "wlo-1", Reference: "OF-1", EntryID: entry.ID, AccountID: "acc_9",
			BusinessID: cat.Business.ID, ServiceID: cat.Services[0].ID, StaffID: bob.ID, StartsAt: offerAt, EndsAt: offerAt.Add(30 * time.Minute),
			BlockStart: offerAt, BlockEnd: offerAt.Add(45 * time.Minute), HeldUntil: fixtureNow.Add(30 * time.Minute), CreatedAt: fixtureNow}); err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Time{busyAt, busyAt.Add(30 * time.Minute), offerAt} {
			if _, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob", StartsAt: at}); code(err) != problem.CodeSlotTaken {
				t.Fatalf("a booking at %s over a busy time or a held offer: %v, want slot_taken", at, err)
			}
		}
		if _, err := f.create(ctx, CreateRequest{AccountID: "acc_1", BusinessRef: "biz-fix", ServiceRef: "svc-cut", StaffRef: "stf-bob",
			StartsAt: nyTime(t, "2026-06-03 12:00")}); err != nil {
			t.Fatal(err)
		}
		day := nyTime(t, "2026-06-03 00:00")
		got, err := s.ListStaffBookings(ctx, []string{bob.ID}, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, b := range got {
			ids = append(ids, b.ID)
		}
		if len(got) != 3 || got[0].ID != store.CalendarBusyID || got[2].ID != "wlo-1" || !got[0].BlockStart.Equal(busyAt) || !got[2].BlockStart.Equal(offerAt) {
			t.Fatalf("staff bookings: %v", ids)
		}
		d, err := s.StaffDay(ctx, "biz-fix", []string{bob.ID}, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		// StaffDay names the calendars' busy times by the business's
		// calendar tag; CalendarBusyDay reads them under the same tag.
		if len(d.Busy) != 2 || d.Busy[0].BookingID != got[1].ID || d.Busy[1].BookingID != "wlo-1" || d.CalendarTag == "" {
			t.Fatalf("staff day: %+v, calendar tag %q", d.Busy, d.CalendarTag)
		}
		cb, err := s.CalendarBusyDay(ctx, cat.Business.ID, day, day.Add(24*time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		if cb.Tag != d.CalendarTag || len(cb.Staff) != 1 || cb.Staff[0].StaffID != bob.ID || len(cb.Staff[0].Busy) != 1 ||
			cb.Staff[0].Busy[0].BookingID != store.CalendarBusyID ||
			!cb.Staff[0].Busy[0].BlockStart.Equal(busyAt) || !cb.Staff[0].Busy[0].BlockEnd.Equal(busyAt.Add(time.Hour)) {
			t.Fatalf("calendar busy day: %+v", cb)
		}
	})
}
