package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCalendarBusyAtScale: the busy times an availability answer reads
// after a calendar changed — one day of every connected calendar of a
// business (CalendarBusyDay), and a booking's slot check (ListStaffBookings)
// — are found through the (staff_id, starts_at) index whatever the
// calendars hold. Each of the 20 staff members of benchCatalog has a
// calendar with 14 busy times a day over four years (20,440 each, 408,800
// in all), never analyzed; one day must touch a handful of buffers, not
// the calendars' years. Buffers, not timings.
func TestCalendarBusyAtScale(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	db := s.DB()
	c := benchCatalog(t, s)
	if err := db.Exec(`ALTER TABLE calendar_busy SET (autovacuum_enabled = false)`).Error; err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(c.Staff))
	for i, st := range c.Staff {
		ids[i] = st.ID
		if err := s.PutStaffCalendar(ctx, store.StaffCalendar{StaffID: st.ID, BusinessID: c.Business.ID, Kind: store.CalendarICS,
			URL: "https://cal.example/" + st.Reference + ".ics", UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// 14 busy times of 30 minutes a day per staff member, from three
	// years back to a year ahead.
	sqltest.FillFunc(t, db, func(tx *gorm.DB) error {
		return tx.Exec(`INSERT INTO calendar_busy (staff_id, href, starts_at, ends_at)
SELECT (?::text[])[1 + s], 'e-' || d || '-' || h || '.ics', t, t + interval '30 minutes'
FROM generate_series(0, ?) AS s, generate_series(-1095, 365) AS d, generate_series(0, 13) AS h,
 LATERAL (SELECT date_trunc('day', now()) + d * interval '1 day' + interval '8 hours' + h * interval '40 minutes' AS t) AS x`,
			"{"+strings.Join(ids, ",")+"}", len(ids)-1).Error
	})
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	captured := sqltest.Capture(t, db, "calendar_busy")
	got, err := s.CalendarBusyDay(ctx, c.Business.ID, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Busy) != 20*14 || got.Tag == "" {
		t.Fatalf("CalendarBusyDay: %d busy times under tag %q, want 280", len(got.Busy), got.Tag)
	}
	if _, err := s.ListStaffBookings(ctx, ids[:4], day, day.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	stmts := captured()
	if len(stmts) != 2 {
		t.Fatalf("captured %d statements, want CalendarBusyDay's and ListStaffBookings'", len(stmts))
	}
	for _, st := range stmts {
		plan, raw, err := sqltest.Explain(ctx, s.SQL(), st.SQL, st.Vars...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d buffers: %.120s", plan.Blocks(), strings.Join(strings.Fields(st.SQL), " "))
		// About ten a calendar (its index pages and the day's rows), not
		// its years.
		if plan.Blocks() > 300 {
			t.Errorf("one day of 20 calendars read %d buffers over 408,800 busy times, want at most 300:\n%s\n%s", plan.Blocks(), st.SQL, raw)
		}
	}
}
