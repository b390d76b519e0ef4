package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestStaffBookingsAtScale: the bookings an availability answer and a
// booking's slot check read — one day of some staff members — are found
// through an index whatever the staff members' history. Each of the 20
// staff members of benchCatalog has 2,500 past bookings (50,000 in all,
// three and a half years of two a day), never analyzed; StaffDay and
// ListStaffBookings for one day of four of them must touch a handful of
// buffers, not every booking those staff members ever had. Buffers, not
// timings.
func TestStaffBookingsAtScale(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	db := s.DB()
	c := benchCatalog(t, s)
	if err := db.Exec(`ALTER TABLE bookings SET (autovacuum_enabled = false)`).Error; err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(c.Staff))
	for i, st := range c.Staff {
		ids[i] = st.ID
	}
	// Two 30-minute bookings a day per staff member, 1,250 days back.
	sqltest.FillFunc(t, db, func(tx *gorm.DB) error {
		return tx.Exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end,
 status, created_at, updated_at)
SELECT 'bkg-' || s || '-' || d, 'LS-' || s || '-' || d, ?, ?, (?::text[])[1 + s],
 t, t + interval '30 minutes', t, t + interval '40 minutes', 'confirmed', t, t
FROM generate_series(0, ?) AS s, generate_series(1, 2500) AS d,
 LATERAL (SELECT date_trunc('day', now()) - (d / 2) * interval '1 day' + (9 + 3 * (d % 2)) * interval '1 hour' AS t) AS x`,
			c.Business.ID, c.Services[0].ID, "{"+strings.Join(ids, ",")+"}", len(ids)-1).Error
	})
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	some := ids[:4]
	captured := sqltest.Capture(t, db, "bookings")
	if _, err := s.StaffDay(ctx, c.Business.Reference, some, day, day.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListStaffBookings(ctx, some, day, day.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	stmts := captured()
	if len(stmts) != 2 {
		t.Fatalf("captured %d statements, want StaffDay's and ListStaffBookings'", len(stmts))
	}
	for _, st := range stmts {
		q := st.SQL
		plan, raw, err := sqltest.Explain(ctx, s.SQL(), q, st.Vars...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d buffers: %.120s", plan.Blocks(), strings.Join(strings.Fields(q), " "))
		if plan.Blocks() > 60 {
			t.Errorf("one day of 4 staff members read %d buffers over 50,000 past bookings, want at most 60:\n%s\n%s", plan.Blocks(), q, raw)
		}
	}
}

// TestStaffBookingsAtScaleSQLite is TestStaffBookingsAtScale on the
// embedded default, across the upgrade that indexes bookings by where they
// end (migration 00009): on a database of the previous schema with 50,000
// past bookings of 20 staff members, the day's bookings of four of them
// (StaffDay, ListStaffBookings) and the slot check of an insert are
// searched by the staff member and "ends after the window starts" once
// upgraded, instead of "starts before the window ends" (every booking the
// staff members ever had); the answers are the same before and after, and
// an overlapping insert is still refused. SQLite reports no buffers, so the
// search is read from EXPLAIN QUERY PLAN; the time per answer before and
// after is logged, not asserted.
func TestStaffBookingsAtScaleSQLite(t *testing.T) {
	ctx := context.Background()
	s := openSchemaAt(t, "sqlite", 8)
	// The engine's reads also see held waitlist offers (migration 00026)
	// and calendar busy times and tags (00027, 00029), and list bookings'
	// respond_by (00022), which this schema predates: give it those
	// tables, empty, and that column for the reads before the upgrade,
	// and drop them before upgrading.
	exec(t, s, `ALTER TABLE bookings ADD COLUMN respond_by DATETIME`,
		`CREATE TABLE calendar_busy (staff_id text NOT NULL, href text NOT NULL, starts_at DATETIME NOT NULL, ends_at DATETIME NOT NULL)`,
		`ALTER TABLE businesses ADD COLUMN calendar_tag text NOT NULL DEFAULT ''`)
	if err := s.DB().Exec(`CREATE TABLE waitlist_offers (id text PRIMARY KEY, reference text, entry_id text, account_id text,
 link_id text, business_id text, service_id text, staff_id text, starts_at DATETIME, ends_at DATETIME, block_start DATETIME,
 block_end DATETIME, held_until DATETIME, status text, booking_id text, created_at DATETIME, updated_at DATETIME)`).Error; err != nil {
		t.Fatal(err)
	}
	c := putCatalogBefore22(t, s, benchCatalogOf())
	ids := make([]string, len(c.Staff))
	for i, st := range c.Staff {
		ids[i] = st.ID
	}
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	db := s.DB()
	insert := func(tx *gorm.DB, id, staff string, start time.Time) error {
		return tx.Exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end,
 status, version, payment_state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'confirmed', 1, 'none', ?, ?)`,
			id, "LS-"+id, c.Business.ID, c.Services[0].ID, staff, start, start.Add(30*time.Minute), start, start.Add(40*time.Minute),
			start, start).Error
	}
	// Two 30-minute bookings a day per staff member, 1,250 days back, and
	// two on the day itself and one the day after for each.
	if err := db.Transaction(func(tx *gorm.DB) error {
		for si, staff := range ids {
			for d := 1; d <= 2500; d++ {
				start := day.Add(-time.Duration(d/2+1)*24*time.Hour + time.Duration(9+3*(d%2))*time.Hour)
				if err := insert(tx, fmt.Sprintf("bkg-%d-%d", si, d), staff, start); err != nil {
					return err
				}
			}
			for j, at := range []time.Duration{10 * time.Hour, 15 * time.Hour, 34 * time.Hour} {
				if err := insert(tx, fmt.Sprintf("bkg-%d-next-%d", si, j), staff, day.Add(at)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	some := ids[:4]
	captured := sqltest.Capture(t, db, "bookings")
	type answer struct {
		day  store.StaffDay
		list []store.Booking
	}
	read := func() (answer, time.Duration) {
		t.Helper()
		var a answer
		began := time.Now()
		const n = 50
		for i := 0; i < n; i++ {
			var err error
			if a.day, err = s.StaffDay(ctx, c.Business.Reference, some, day, day.Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if a.list, err = s.ListStaffBookings(ctx, some, day, day.Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		return a, time.Since(began) / n
	}
	overlapping := store.Booking{ID: "bkg-overlap", Reference: "LS-overlap", BusinessID: c.Business.ID, ServiceID: c.Services[0].ID,
		StaffID: some[0], StartsAt: day.Add(10*time.Hour + 20*time.Minute), EndsAt: day.Add(10*time.Hour + 50*time.Minute),
		BlockStart: day.Add(10*time.Hour + 20*time.Minute), BlockEnd: day.Add(11 * time.Hour), Status: store.BookingConfirmed,
		Version: 1, CreatedAt: day, UpdatedAt: day}
	searches := func() []string {
		t.Helper()
		var out []string
		seen := map[string]bool{} // read repeats the same statements
		for _, st := range captured() {
			if seen[st.SQL] {
				continue
			}
			seen[st.SQL] = true
			plan, err := sqltest.QueryPlan(ctx, s.SQL(), st.SQL, st.Vars...)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range plan {
				if strings.Contains(step, "bookings_staff_block") {
					out = append(out, step)
				}
			}
		}
		return out
	}

	before, slow := read()
	if err := s.InsertBooking(ctx, overlapping); !errors.Is(err, store.ErrOverlap) {
		t.Fatalf("overlapping insert on the previous schema: %v, want ErrOverlap", err)
	}
	old := searches()
	exec(t, s, `DROP TABLE waitlist_offers`, `DROP TABLE calendar_busy`, `ALTER TABLE businesses DROP COLUMN calendar_tag`, `ALTER TABLE bookings DROP COLUMN respond_by`)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	after, fast := read()
	if err := s.InsertBooking(ctx, overlapping); !errors.Is(err, store.ErrOverlap) {
		t.Fatalf("overlapping insert after the upgrade: %v, want ErrOverlap", err)
	}
	upgraded := searches()
	t.Logf("one day of 4 staff members over 50,000 past bookings: %v per StaffDay + ListStaffBookings before the upgrade, %v after", slow, fast)
	t.Logf("searches before: %q", old)
	t.Logf("searches after:  %q", upgraded)

	if len(before.list) != 8 || len(before.day.Busy) != 8 {
		t.Fatalf("the day holds %d and %d bookings of the 4 staff members, want 8 (2 each)", len(before.list), len(before.day.Busy))
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the answers changed with the index:\n before %+v\n after  %+v", before, after)
	}
	if len(upgraded) != 3 { // StaffDay, ListStaffBookings, the slot check
		t.Fatalf("after the upgrade %d searches use a staff bookings index, want 3: %q", len(upgraded), upgraded)
	}
	for _, d := range upgraded {
		if !strings.Contains(d, "bookings_staff_block_end (staff_id=? AND block_end>?)") {
			t.Errorf("search %q does not find the window by where bookings end", d)
		}
	}
}
