package booking

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// countStatements counts every SQL statement gorm runs on s from now on.
func countStatements(t testing.TB, s *sqlstore.Store) *atomic.Int64 {
	t.Helper()
	n := new(atomic.Int64)
	inc := func(*gorm.DB) { n.Add(1) }
	cb := s.DB().Callback()
	name := "booking_test_count_" + store.RandomString(4)
	for _, err := range []error{
		cb.Query().After("gorm:query").Register(name, inc),
		cb.Row().After("gorm:row").Register(name, inc),
		cb.Raw().After("gorm:raw").Register(name, inc),
		cb.Create().After("gorm:create").Register(name, inc),
		cb.Update().After("gorm:update").Register(name, inc),
		cb.Delete().After("gorm:delete").Register(name, inc),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// bigCatalog has staff members each performing every one of services
// services, all working 08:00–20:00 every day.
func bigCatalog(ref string, staff, services int) store.Catalog {
	all := []time.Weekday{0, 1, 2, 3, 4, 5, 6}
	c := store.Catalog{
		Business: store.Business{Reference: ref, Name: "Big " + ref, Category: store.CategoryAppointment, City: "Chicago",
			TimeZone: "America/Chicago", AgentBooking: true, HorizonDays: 60, SlotIntervalMinutes: 15, Currency: "USD"},
		OpeningHours: weekly(all, [2]int{hm(8, 0), hm(20, 0)}),
		StaffHours:   map[string][]store.HoursWindow{},
	}
	var svcRefs []string
	for i := 0; i < services; i++ {
		r := fmt.Sprintf("svc-%02d", i)
		svcRefs = append(svcRefs, r)
		c.Services = append(c.Services, store.Service{Reference: r, Name: "Service " + r, DurationMinutes: 30 + 15*(i%4),
			PriceCents: 5000, Currency: "USD", BufferAfterMinutes: 5 * (i % 3)})
	}
	for i := 0; i < staff; i++ {
		r := fmt.Sprintf("stf-%02d", i)
		c.Staff = append(c.Staff, store.Staff{Reference: r, Name: "Staff " + r, ServiceIDs: svcRefs})
		c.StaffHours[r] = weekly(all, [2]int{hm(8, 0), hm(12, 0)}, [2]int{hm(12, 30), hm(20, 0)})
	}
	return c
}

// TestAvailabilityStatements: one availability answer costs a constant
// number of statements (≤ 3) whatever the staff count; one on a warm cache
// (store.StaffDay), and a catalog change is still seen at once.
func TestAvailabilityStatements(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		f := newFixture(t, s, bigCatalog("biz-small", 1, 2), bigCatalog("biz-big", 40, 2))
		n := countStatements(t, s)
		for _, ref := range []string{"biz-small", "biz-big"} {
			q := AvailabilityQuery{BusinessRef: ref, ServiceRef: "svc-00", LocalDate: "2026-06-03"}
			if _, err := f.svc.Availability(ctx, q); err != nil { // cold: loads the catalog
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				n.Store(0)
				a, err := f.svc.Availability(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got := n.Load(); got != 1 {
					t.Fatalf("%s (%d staff): %d statements per warm answer, want 1", ref, len(a.Staff), got)
				}
			}
		}
		// A catalog change is seen at once: the business row's UpdatedAt moved.
		if _, err := s.SetAgentBooking(ctx, "biz-big", false); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-big", ServiceRef: "svc-00", LocalDate: "2026-06-03"}); code(err) != problem.CodeBusinessNotBookable {
			t.Fatalf("stale cache after SetAgentBooking: %v", err)
		}
		c := bigCatalog("biz-small", 1, 2)
		c.StaffHours["stf-00"] = nil
		if _, err := s.PutCatalog(ctx, c); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-small", ServiceRef: "svc-00", LocalDate: "2026-06-03"})
		if err != nil || len(a.Staff[0].Slots) != 0 {
			t.Fatalf("stale cache after PutCatalog: %v %v", err, fmtSlots(a.Staff[0].Slots))
		}
	})
}
