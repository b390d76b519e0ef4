package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// Race business: five staff members, one 30-minute service with a 5-minute
// buffer after, on a 15-minute grid, open every day 08:00–20:00 UTC — so
// neighbouring slots overlap and many agents aiming at a few slots collide.
const (
	RaceBusiness = "biz-cluster-race"
	RaceService  = "svc-race-cut"
	RaceZone     = "UTC"
)

// RaceStaff are the five staff references.
var RaceStaff = []string{"stf-race-1", "stf-race-2", "stf-race-3", "stf-race-4", "stf-race-5"}

// PutRaceBusiness stores the race business, changed by edit first when
// given.
func (c *Cluster) PutRaceBusiness(t testing.TB, edit ...func(*store.Catalog)) store.Catalog {
	t.Helper()
	all := []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
	var hours []store.HoursWindow
	for _, d := range all {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 8 * 60, EndMin: 20 * 60})
	}
	cat := store.Catalog{
		Business: store.Business{Reference: RaceBusiness, Name: "Cluster Race Salon", Category: store.CategoryAppointment,
			City: "Testville", Address: "1 Loopback Road", TimeZone: RaceZone, AgentBooking: true, MinNoticeMinutes: 0,
			HorizonDays: 60, SlotIntervalMinutes: 15, CancellationWindowMinutes: 0, Currency: "USD",
			CancellationPolicy: "Free cancellation any time.", PrivacyNotice: "Notes are visible to the business.",
			BookingURL: "https://race.example/book"},
		OpeningHours: hours,
		Services: []store.Service{{Reference: RaceService, Name: "Race cut", DurationMinutes: 30, PriceCents: 1000,
			Currency: "USD", BufferAfterMinutes: 5}},
		StaffHours: map[string][]store.HoursWindow{},
	}
	for i, ref := range RaceStaff {
		cat.Staff = append(cat.Staff, store.Staff{Reference: ref, Name: fmt.Sprintf("Race Staff %d", i+1), ServiceIDs: []string{RaceService}})
		cat.StaffHours[ref] = hours
	}
	for _, e := range edit {
		e(&cat)
	}
	out, err := c.Store.PutCatalog(context.Background(), cat)
	if err != nil {
		t.Fatalf("race business: %v", err)
	}
	return out
}

// RaceDay is the local date (UTC) the race books: a few days ahead, inside
// the horizon. It is read off the clock once per test binary, so a run
// that crosses midnight UTC books on one day throughout (a confirmation
// must name the slot its summary named).
var RaceDay = sync.OnceValue(func() time.Time {
	d := time.Now().UTC().AddDate(0, 0, 3)
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
})

// Overlaps counts pairs of slot-holding (pending or confirmed) bookings of one staff member whose
// buffer-padded blocks overlap, straight from SQL.
func (c *Cluster) Overlaps(t testing.TB) int {
	t.Helper()
	var n int
	err := c.SQL.QueryRow(`SELECT count(*) FROM bookings a JOIN bookings b
		ON a.staff_id = b.staff_id AND a.id < b.id
		WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')
		  AND a.block_start < b.block_end AND b.block_start < a.block_end`).Scan(&n)
	if err != nil {
		t.Fatalf("overlap query: %v", err)
	}
	return n
}
