package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCatalogImportAtScale: a catalog import that drops a staff member or
// a service with no bookings, on a business with 50,000 past bookings,
// across the upgrade that indexes every foreign key (migration 00013), on
// both backends. Before it, the database checked that no booking referred
// to the dropped rows by reading every booking ever made, inside the
// import's transaction; after it, through bookings_staff and
// bookings_service. The answers are the same on both sides: the import
// succeeds, and dropping a staff member who has bookings is refused
// (store.InUseError) and changes nothing. The median time of five such
// imports on each side, beside that of the same import with nothing
// dropped, is logged, not asserted (TestForeignKeysIndexed holds the
// indexes).
func TestCatalogImportAtScale(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := openSchemaAt(t, backend, 12)
			addColumns22(t, s)
			c := store.Catalog{
				Business: store.Business{Reference: "salon", Name: "Salon", Category: store.CategoryAppointment, TimeZone: "UTC", AgentBooking: true, Currency: "EUR"},
				Services: []store.Service{
					{Reference: "cut", Name: "Cut", DurationMinutes: 30, Currency: "EUR"},
					{Reference: "color-1", Name: "Colour", DurationMinutes: 60, Currency: "EUR"},
					{Reference: "color-2", Name: "Colour", DurationMinutes: 60, Currency: "EUR"},
				},
			}
			for i := range 20 {
				c.Staff = append(c.Staff, store.Staff{Reference: fmt.Sprint("s", i), Name: fmt.Sprint("Staff ", i), ServiceIDs: []string{"cut"}})
			}
			for i := 1; i <= 2; i++ {
				c.Staff = append(c.Staff, store.Staff{Reference: fmt.Sprint("spare-", i), Name: "Spare", ServiceIDs: []string{fmt.Sprint("color-", i)}})
			}
			saved, err := s.PutCatalog(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			// 2,500 completed 30-minute bookings for each of the 20 staff
			// members, one an hour going back, all of the service "cut".
			start, end := `now() - d.i * interval '1 hour'`, `now() - d.i * interval '1 hour' + interval '30 minutes'`
			if backend == "sqlite" {
				start, end = `datetime('now', '-' || d.i || ' hours')`, `datetime('now', '-' || d.i || ' hours', '+30 minutes')`
			}
			sqltest.FillFunc(t, s.DB(), func(tx *gorm.DB) error {
				return tx.Exec(`WITH RECURSIVE d(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM d WHERE i < 2500)
INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end,
 status, version, payment_state, created_at, updated_at)
SELECT 'bkg-' || st.reference || '-' || d.i, 'LS-' || st.reference || '-' || d.i, st.business_id, ?, st.id, `+start+`, `+end+`, `+start+`, `+end+`,
 'completed', 1, 'none', `+start+`, `+start+`
FROM staff AS st CROSS JOIN d
WHERE st.business_id = ? AND st.reference NOT LIKE 'spare-%'`, saved.Services[0].ID, saved.Business.ID).Error
			})
			var n int64
			if err := s.DB().Raw(`SELECT count(*) FROM bookings`).Scan(&n).Error; err != nil || n != 50000 {
				t.Fatalf("%d bookings (%v), want 50,000", n, err)
			}
			// without returns c less the named staff members and services.
			without := func(refs ...string) store.Catalog {
				out := c
				out.Staff = slices.DeleteFunc(slices.Clone(c.Staff), func(st store.Staff) bool { return slices.Contains(refs, st.Reference) })
				out.Services = slices.DeleteFunc(slices.Clone(c.Services), func(sv store.Service) bool { return slices.Contains(refs, sv.Reference) })
				return out
			}
			less := without("spare-1", "color-1")
			put := func(cat store.Catalog) time.Duration {
				t.Helper()
				began := time.Now()
				if _, err := s.PutCatalog(ctx, cat); err != nil {
					t.Fatalf("import of %d staff members and %d services: %v", len(cat.Staff), len(cat.Services), err)
				}
				return time.Since(began)
			}
			// measure imports the whole catalog again unchanged and then
			// without spare-1 and color-1, five times, and returns the
			// median time of each; the catalog is left without them.
			measure := func() (same, drop time.Duration) {
				t.Helper()
				var sames, drops []time.Duration
				for range 5 {
					put(c) // spare-1 and color-1 back
					sames = append(sames, put(c))
					drops = append(drops, put(less))
				}
				slices.Sort(sames)
				slices.Sort(drops)
				return sames[2], drops[2]
			}
			refused := func(when string) {
				t.Helper()
				var inUse *store.InUseError
				if _, err := s.PutCatalog(ctx, without("s0")); !errors.As(err, &inUse) || inUse.Kind != "staff" || inUse.Reference != "s0" {
					t.Fatalf("%s: dropping a staff member with bookings: %v, want store.InUseError for staff s0", when, err)
				}
				got, err := s.LoadCatalog(ctx, "salon")
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Staff) != len(less.Staff) || len(got.Services) != len(less.Services) {
					t.Fatalf("%s: the refused import changed the catalog: %d staff members and %d services, want %d and %d",
						when, len(got.Staff), len(got.Services), len(less.Staff), len(less.Services))
				}
			}

			oldSame, oldDrop := measure()
			refused("before the upgrade")
			dropColumns22(t, s)
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatalf("upgrade: %v", err)
			}
			newSame, newDrop := measure()
			refused("after the upgrade")
			t.Logf("%s, 50,000 past bookings, median of 5: an import dropping a staff member and a service that have no bookings took %v before the upgrade and %v after; the same import unchanged %v and %v",
				backend, oldDrop, newDrop, oldSame, newSame)
		})
	}
}
