package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// The growth step of search and bookings (docs/performance.md, "Search
// and bookings at size"): on a database of its own, the demo catalog, a
// busy salon and two people; each read timed in a window before the
// catalog grows by -catalog-growth businesses (a tenth of them on
// SQLite, at most 20,000) and the bookings by -bookings-growth rows, and
// again after, in the same run; an import batch of 500 businesses timed
// before and after the catalog's growth; and the person with 5,000
// bookings against the one with five, in alternating windows. Ratios are
// what the targets judge (after ÷ before, big ÷ small).

// growthReads is one read of the step.
type growthRead struct {
	name string
	fn   func(ctx context.Context) error
}

// timeRead runs fn sequentially for window (at least 20 calls) and returns
// its p50 and p99.
func timeRead(ctx context.Context, fn func(context.Context) error, window time.Duration) (p50, p99 time.Duration, err error) {
	var lat []time.Duration
	began := time.Now()
	for len(lat) < 20 || time.Since(began) < window {
		t := time.Now()
		if err := fn(ctx); err != nil {
			return 0, 0, err
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}

// importFile is a catalog file of n businesses whose references begin
// with prefix.
func importFile(prefix string, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"businesses":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `
{"reference":"%s-%05d","name":"Imported Studio %d","category":"appointment","city":"Porto","timezone":"Europe/Lisbon","currency":"EUR","agent_booking":true,
 "hours":{"monday":["09:00-13:00","14:00-19:00"]},
 "services":[{"reference":"cut","name":"Haircut","duration_minutes":30,"price_cents":2200}],
 "staff":[{"reference":"joana","name":"Joana","services":["cut"],"hours":{"monday":["09:00-13:00"]}}]}`, prefix, i, i)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

func growthStep(ctx context.Context, backend, dir, pgURL string, businesses, bookings int, window time.Duration) ([]string, error) {
	st, _, cleanup, err := openStore(ctx, backend, dir, pgURL, 0)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	now := store.SystemClock()
	for _, c := range booking.DemoCatalogs(now) {
		if _, err := st.PutCatalog(ctx, c); err != nil {
			return nil, err
		}
	}
	busy := store.Catalog{Business: store.Business{Reference: "busy-salon", Name: "Busy Salon", Category: store.CategoryAppointment,
		City: "Porto", TimeZone: "UTC", AgentBooking: true, Currency: "EUR", HorizonDays: 60, SlotIntervalMinutes: 15}}
	busy.Services = []store.Service{{Reference: "cut", Name: "Cut", DurationMinutes: 30, Currency: "EUR"}}
	for d := time.Sunday; d <= time.Saturday; d++ {
		busy.OpeningHours = append(busy.OpeningHours, store.HoursWindow{Weekday: d, StartMin: 0, EndMin: 1440})
	}
	for i := range 50 {
		ref := fmt.Sprint("s", i)
		busy.Staff = append(busy.Staff, store.Staff{Reference: ref, Name: fmt.Sprint("Staff ", i), ServiceIDs: []string{"cut"}})
	}
	busy.StaffHours = map[string][]store.HoursWindow{}
	for _, s := range busy.Staff {
		busy.StaffHours[s.Reference] = busy.OpeningHours
	}
	if busy, err = st.PutCatalog(ctx, busy); err != nil {
		return nil, err
	}
	svc := booking.NewService(st, store.SystemClock)
	adm, err := admin.New(admin.Config{Store: st, Clock: store.SystemClock})
	if err != nil {
		return nil, err
	}
	tomorrow := now.Add(24 * time.Hour).Format("2006-01-02")
	reads := []growthRead{
		{"business search \"hair\"", func(ctx context.Context) error {
			_, err := svc.SearchBusinesses(ctx, "hair", "", 10, 0)
			return err
		}},
		{"city search \"s\" in Porto", func(ctx context.Context) error {
			_, err := svc.SearchBusinesses(ctx, "s", "Porto", 10, 0)
			return err
		}},
		{"availability, busy staff member", func(ctx context.Context) error {
			_, err := svc.Availability(ctx, booking.AvailabilityQuery{BusinessRef: "busy-salon", ServiceRef: "cut", LocalDate: tomorrow, StaffRef: "s0"})
			return err
		}},
	}
	var lines []string
	importBatch := func(prefix string) (time.Duration, error) {
		t := time.Now()
		_, err := adm.ImportCatalog(ctx, admin.Actor{ID: "bench"}, importFile(prefix, 500), "json")
		return time.Since(t), err
	}
	before := make([][2]time.Duration, len(reads))
	for i, r := range reads {
		if before[i][0], before[i][1], err = timeRead(ctx, r.fn, window); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	importBefore, err := importBatch("before")
	if err != nil {
		return nil, err
	}

	t0 := time.Now()
	if err := growCatalog(st, backend, businesses, now); err != nil {
		return nil, fmt.Errorf("catalog growth: %w", err)
	}
	if err := growBookings(st, backend, busy, bookings, now); err != nil {
		return nil, fmt.Errorf("bookings growth: %w", err)
	}
	lines = append(lines, fmt.Sprintf("%s growth step: %d businesses and %d bookings added in %s, not analyzed",
		backend, businesses, bookings, time.Since(t0).Round(time.Second)))

	importAfter, err := importBatch("after")
	if err != nil {
		return nil, err
	}
	for i, r := range reads {
		p50, p99, err := timeRead(ctx, r.fn, window)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		lines = append(lines, fmt.Sprintf("%s %-34s p50 %7s → %7s (×%.2f)  p99 %7s → %7s (×%.2f)", backend, r.name,
			ms(before[i][0]), ms(p50), ratio(p50, before[i][0]), ms(before[i][1]), ms(p99), ratio(p99, before[i][1])))
	}
	lines = append(lines, fmt.Sprintf("%s import batch of 500 businesses: %s before the growth, %s after (×%.2f)", backend,
		importBefore.Round(time.Millisecond), importAfter.Round(time.Millisecond), ratio(importAfter, importBefore)))

	// search_my_bookings: the person with 5,000 bookings against the one
	// with five, in alternating windows, a page of five for both (each
	// result carries a signed grant, so equal pages compare the reads).
	mine := func(acct string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := svc.MyBookings(ctx, acct, "past", 5, 0) // five results for both
			return err
		}
	}
	var big, small [2][]time.Duration
	for range 3 {
		for j, acct := range []string{"acct-big", "acct-small"} {
			p50, p99, err := timeRead(ctx, mine(acct), window/3)
			if err != nil {
				return nil, err
			}
			w := &big
			if j == 1 {
				w = &small
			}
			w[0], w[1] = append(w[0], p50), append(w[1], p99)
		}
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	lines = append(lines, fmt.Sprintf("%s search_my_bookings (past), 5,000 bookings ÷ 5: p50 %s ÷ %s (×%.2f)  p99 %s ÷ %s (×%.2f)", backend,
		ms(med(big[0])), ms(med(small[0])), ratio(med(big[0]), med(small[0])), ms(med(big[1])), ms(med(small[1])), ratio(med(big[1]), med(small[1]))))
	return lines, nil
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// growCatalog adds n searchable businesses in SQL, as a bulk load would,
// named so that one in five is a hair business and a third are in Porto,
// and indexes them for search (the store's BackfillSearch, where it has
// one: the code before migration 00024 searched search_text, which the
// fill writes too).
func growCatalog(st *sqlstore.Store, backend string, n int, now time.Time) error {
	err := st.DB().Transaction(func(tx *gorm.DB) error {
		if backend == "postgres" {
			if err := tx.Exec(`SET LOCAL statement_timeout = 0`).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`WITH RECURSIVE d(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM d WHERE i < ?),
n AS (SELECT i, CASE i % 5 WHEN 0 THEN 'Hair' WHEN 1 THEN 'Nail' WHEN 2 THEN 'Barber' WHEN 3 THEN 'Spa' ELSE 'Massage' END || ' Studio ' || i AS name,
 CASE WHEN i % 3 = 0 THEN 'Porto' ELSE 'Town ' || (i % 500) END AS city FROM d)
INSERT INTO businesses (id, reference, name, category, city, time_zone, agent_booking, search_text, created_at, updated_at)
SELECT 'biz-grow-' || i, 'grow-' || i, name, 'appointment', city, 'UTC', true, lower(name || ' appointment ' || city), ?, ? FROM n`, n, now, now).Error
	})
	if err != nil {
		return err
	}
	if b, ok := any(st).(interface {
		BackfillSearch(context.Context) (int, error)
	}); ok {
		_, err = b.BackfillSearch(context.Background())
	}
	return err
}

// growBookings adds n past bookings of the busy salon's 50 staff members,
// one an hour each going back; every 200th is the person with 5,000 at
// n = 1,000,000 (n/5,000 at other sizes), five are the person with five.
func growBookings(st *sqlstore.Store, backend string, busy store.Catalog, n int, now time.Time) error {
	ids := make([]string, len(busy.Staff))
	for i, s := range busy.Staff {
		ids[i] = s.ID
	}
	start := now.Truncate(time.Hour).Add(-time.Hour)
	every := max(n/5000, 1)
	if backend == "postgres" {
		return st.DB().Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(`SET LOCAL statement_timeout = 0`).Error; err != nil {
				return err
			}
			return tx.Exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, account_id, starts_at, ends_at, block_start, block_end,
 status, created_at, updated_at)
SELECT 'bkg-grow-' || i, 'LS-GROW-' || i, ?, ?, (?::text[])[1 + i % 50],
 CASE WHEN i % ? = 0 THEN 'acct-big' WHEN i IN (1, 2, 3, 4, 5) THEN 'acct-small' ELSE 'acct-' || (i % 200000) END,
 x.t, x.t + interval '30 minutes', x.t, x.t + interval '30 minutes', 'completed', x.t, x.t
FROM generate_series(0, ? - 1) AS i, LATERAL (SELECT ?::timestamptz - (i / 50) * interval '1 hour' AS t) AS x`,
				busy.Business.ID, busy.Services[0].ID, "{"+strings.Join(ids, ",")+"}", every, n, start).Error
		})
	}
	return st.DB().Transaction(func(tx *gorm.DB) error {
		for i := range n {
			t := start.Add(-time.Duration(i/50) * time.Hour)
			acct := fmt.Sprint("acct-", i%200000)
			switch {
			case i%every == 0:
				acct = "acct-big"
			case i >= 1 && i <= 5:
				acct = "acct-small"
			}
			if err := tx.Exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, account_id, starts_at, ends_at, block_start, block_end,
 status, version, payment_state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'completed', 1, 'none', ?, ?)`,
				fmt.Sprint("bkg-grow-", i), fmt.Sprint("LS-GROW-", i), busy.Business.ID, busy.Services[0].ID, ids[i%50], acct,
				t, t.Add(30*time.Minute), t, t.Add(30*time.Minute), t, t).Error; err != nil {
				return err
			}
		}
		return nil
	})
}
