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
// business (CalendarBusyDay), or of the one calendar that changed when the
// others' are known, and a booking's slot check (ListStaffBookings) — are
// found through the (staff_id, starts_at) index whatever the calendars
// hold. Each of the 20 staff members of benchCatalog has a
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
	got, err := s.CalendarBusyDay(ctx, c.Business.ID, day, day.Add(24*time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var known []string
	for _, sc := range got.Staff {
		n += len(sc.Busy)
		known = append(known, sc.BusyTag)
	}
	if n != 20*14 || got.Tag == "" || len(got.Staff) != 20 {
		t.Fatalf("CalendarBusyDay: %d busy times of %d calendars under tag %q, want 280 of 20", n, len(got.Staff), got.Tag)
	}
	// After one calendar changed: the 19 others are known.
	again, err := s.CalendarBusyDay(ctx, c.Business.ID, day, day.Add(24*time.Hour), known[1:])
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Staff) != 20 || len(again.Staff[0].Busy) != 14 || !again.Staff[1].Known || len(again.Staff[1].Busy) != 0 {
		t.Fatalf("CalendarBusyDay with 19 calendars known: %+v", again.Staff[:2])
	}
	if _, err := s.ListStaffBookings(ctx, ids[:4], day, day.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	stmts := captured()
	if len(stmts) != 3 {
		t.Fatalf("captured %d statements, want CalendarBusyDay's (twice) and ListStaffBookings'", len(stmts))
	}
	// About ten a calendar read (its index pages and the day's rows), not
	// its years; the known calendars' not at all.
	for i, max := range []int{300, 30, 60} {
		st := stmts[i]
		plan, raw, err := sqltest.Explain(ctx, s.SQL(), st.SQL, st.Vars...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d buffers: %.120s", plan.Blocks(), strings.Join(strings.Fields(st.SQL), " "))
		if plan.Blocks() > max {
			t.Errorf("statement %d read %d buffers over 408,800 busy times, want at most %d:\n%s\n%s", i, plan.Blocks(), max, st.SQL, raw)
		}
	}
}
