package booking

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// fixtureNow is Monday 1 June 2026, 08:00 in New York.
var fixtureNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fixtureCatalogs: a New York appointment business, one with agent booking
// off, and a restaurant.
func fixtureCatalogs() []store.Catalog {
	all := []time.Weekday{0, 1, 2, 3, 4, 5, 6}
	fix := store.Catalog{
		Business: store.Business{Reference: "biz-fix", Name: "Fixture Cuts", Category: store.CategoryAppointment, City: "New York",
			Address: "1 Test Street", TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 60, HorizonDays: 30,
			SlotIntervalMinutes: 30, CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 1500, Currency: "USD",
			CancellationPolicy: "Free until 24 hours before.", PrivacyNotice: "Shared with the shop.", BookingURL: "https://fix.example/book"},
		OpeningHours: weekly(all, [2]int{hm(9, 0), hm(17, 0)}),
		Services: []store.Service{
			{Reference: "svc-cut", Name: "Cut", DurationMinutes: 30, PriceCents: 3500, Currency: "USD", BufferAfterMinutes: 10},
			{Reference: "svc-colour", Name: "Colour", DurationMinutes: 60, PriceCents: 9000, Currency: "USD", DepositRequired: true},
			{Reference: "svc-long", Name: "Long", DurationMinutes: 60, PriceCents: 6000, Currency: "USD"},
		},
		Staff: []store.Staff{
			{Reference: "stf-ann", Name: "Ann", ServiceIDs: []string{"svc-cut", "svc-long"}},
			{Reference: "stf-bob", Name: "Bob", ServiceIDs: []string{"svc-cut"}},
			{Reference: "stf-cara", Name: "Cara", ServiceIDs: []string{"svc-colour"}},
		},
		StaffHours: map[string][]store.HoursWindow{
			"stf-ann":  weekly(all, [2]int{hm(9, 0), hm(12, 0)}, [2]int{hm(13, 0), hm(17, 0)}),
			"stf-bob":  weekly(all, [2]int{hm(9, 0), hm(17, 0)}),
			"stf-cara": weekly(all, [2]int{hm(9, 0), hm(17, 0)}),
		},
	}
	off := store.Catalog{
		Business: store.Business{Reference: "biz-off", Name: "Offline Salon", Category: store.CategoryAppointment, City: "New York",
			TimeZone: "America/New_York", AgentBooking: false, Currency: "USD", BookingURL: "https://off.example"},
		OpeningHours: weekly(all, [2]int{hm(9, 0), hm(17, 0)}),
		Services:     []store.Service{{Reference: "svc-x", Name: "X", DurationMinutes: 30, Currency: "USD"}},
		Staff:        []store.Staff{{Reference: "stf-x", Name: "X", ServiceIDs: []string{"svc-x"}}},
		StaffHours:   map[string][]store.HoursWindow{"stf-x": weekly(all, [2]int{hm(9, 0), hm(17, 0)})},
	}
	rest := store.Catalog{
		Business: store.Business{Reference: "biz-rest", Name: "Fixture Trattoria", Category: store.CategoryRestaurant, City: "New York",
			TimeZone: "America/New_York", AgentBooking: true, Currency: "USD", BookingURL: "https://rest.example"},
		OpeningHours: weekly(all, [2]int{hm(17, 0), hm(23, 0)}),
	}
	return []store.Catalog{fix, off, rest}
}

type fixture struct {
	st  *sqlstore.Store
	svc *Service
	clk *clock
}

func newFixture(t testing.TB, st *sqlstore.Store, cats ...store.Catalog) *fixture {
	t.Helper()
	if cats == nil {
		cats = fixtureCatalogs()
	}
	for _, c := range cats {
		if _, err := st.PutCatalog(context.Background(), c); err != nil {
			t.Fatalf("put catalog %s: %v", c.Business.Reference, err)
		}
	}
	clk := &clock{t: fixtureNow}
	return &fixture{st: st, svc: NewService(st, clk.now), clk: clk}
}

// create plans and executes a create in one transaction.
func (f *fixture) create(ctx context.Context, r CreateRequest) (store.Booking, error) {
	p, err := f.svc.PlanCreate(ctx, r)
	if err != nil {
		return store.Booking{}, err
	}
	var b store.Booking
	err = f.st.InTx(ctx, func(tx store.Store) error {
		var err error
		b, err = f.svc.Create(ctx, tx, p)
		return err
	})
	return b, err
}

func code(err error) string {
	if err == nil {
		return ""
	}
	if c := ErrorCode(err); c != "" {
		return c
	}
	return "internal: " + err.Error()
}

// nyTime reads a New York wall time on the fixture's dates.
func nyTime(t testing.TB, s string) time.Time {
	t.Helper()
	loc, _ := time.LoadLocation("America/New_York")
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
