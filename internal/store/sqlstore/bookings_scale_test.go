package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

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
	if err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`SET LOCAL statement_timeout = 0`).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end,
 status, created_at, updated_at)
SELECT 'bkg-' || s || '-' || d, 'LS-' || s || '-' || d, ?, ?, (?::text[])[1 + s],
 t, t + interval '30 minutes', t, t + interval '40 minutes', 'confirmed', t, t
FROM generate_series(0, ?) AS s, generate_series(1, 2500) AS d,
 LATERAL (SELECT date_trunc('day', now()) - (d / 2) * interval '1 day' + (9 + 3 * (d % 2)) * interval '1 hour' AS t) AS x`,
			c.Business.ID, c.Services[0].ID, "{"+strings.Join(ids, ",")+"}", len(ids)-1).Error
	}); err != nil {
		t.Fatal(err)
	}
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
