package booking

import (
	"context"
	"strconv"
	"testing"
	"time"

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
// slots, and cost no extra statement: still one per warm answer.
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
		if _, err := f.svc.Availability(ctx, q); err != nil {
			t.Fatal(err)
		}
		n := countStatements(t, s)
		a, err := f.svc.Availability(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 1 {
			t.Fatalf("%d statements per warm answer with connected calendars, want 1", got)
		}
		open := func(i int, hhmm string) bool {
			for _, sl := range a.Staff[i].Slots {
				if sl.StartsAt.In(loc).Format("15:04") == hhmm {
					return true
				}
			}
			return false
		}
		if open(1, "10:00") || open(1, "10:30") || !open(1, "11:00") || !open(0, "10:00") {
			t.Fatalf("slots around the busy time: %v / %v", fmtSlots(a.Staff[0].Slots), fmtSlots(a.Staff[1].Slots))
		}
		// The cold path (the catalog loaded again) reads them too.
		f2 := NewService(s, func() time.Time { return fixtureNow })
		a2, err := f2.Availability(ctx, q)
		if err != nil || len(a2.Staff[1].Slots) != len(a.Staff[1].Slots) {
			t.Fatalf("cold answer: %v, %d slots, want %d", err, len(a2.Staff[1].Slots), len(a.Staff[1].Slots))
		}
	})
}

// BenchmarkAvailabilityConnectedCalendar: one day's answer for 20 staff
// members, without a connected calendar and with one each: a 5,000-event
// calendar over four years, of which the year ahead is stored (1,250 busy
// times, about 3 a day), and a dense one with 5,000 busy times in the year
// ahead (about 14 a day). docs/calendars.md has the ratios.
func BenchmarkAvailabilityConnectedCalendar(b *testing.B) {
	for _, be := range sqltest.Backends() {
		for _, busy := range []int{0, 1250, 5000} {
			name := be.Name + "/without"
			if busy > 0 {
				name = be.Name + "/busy_" + strconv.Itoa(busy) + "_a_year_each"
			}
			b.Run(name, func(b *testing.B) {
				f, cat := benchStore(b, be, 20, 10, 2)
				if busy > 0 {
					connectCalendars(b, f.st, cat, busy)
				}
				ctx := context.Background()
				date := fixtureNow.AddDate(0, 0, 1).Format("2006-01-02")
				q := AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: "svc-00", LocalDate: date}
				if _, err := f.svc.Availability(ctx, q); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := f.svc.Availability(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
