package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestImportStoppedThenRerun: an import that stops part-way (here its
// context ends after two of five businesses) says how many were written
// and lists them; importing the same file again completes it, keeping the
// businesses already written (an import replaces by reference).
func TestImportStoppedThenRerun(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		svc := newService(t, s)
		a := admin.Actor{ID: "cli"}
		file := testkit.CatalogFile(5)
		ctx, cancel := context.WithCancel(context.Background())
		res, err := svc.ImportCatalogProgress(ctx, a, file, "json", func(done, _ int) {
			if done == 2 {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the 2 business(es) before it of 5 were written") {
			t.Fatalf("stopped import: %v", err)
		}
		if strings.Join(res.Imported, " ") != "biz-00000 biz-00001" {
			t.Errorf("stopped import reports %v written", res.Imported)
		}
		first, err := s.LoadCatalog(context.Background(), "biz-00000")
		if err != nil {
			t.Fatal(err)
		}
		if bs, _ := s.ListBusinesses(context.Background()); len(bs) != 2 {
			t.Fatalf("%d businesses after the stop, want 2", len(bs))
		}
		var steps []int
		res, err = svc.ImportCatalogProgress(context.Background(), a, file, "json", func(done, _ int) { steps = append(steps, done) })
		if err != nil || len(res.Imported) != 5 || len(steps) != 5 || steps[4] != 5 {
			t.Fatalf("re-run: %v %v, progress %v", res.Imported, err, steps)
		}
		again, _ := s.LoadCatalog(context.Background(), "biz-00000")
		if bs, _ := s.ListBusinesses(context.Background()); len(bs) != 5 {
			t.Errorf("%d businesses after the re-run, want 5", len(bs))
		}
		if again.Business.ID != first.Business.ID || again.Services[0].ID != first.Services[0].ID || again.Staff[0].ID != first.Staff[0].ID {
			t.Errorf("the re-run replaced ids of a business already written")
		}
	})
}

// TestImportIndependentOfCatalogSize: an import's statements are the same
// whatever the size of the catalog already stored — before, every batch
// read every stored business to find which of the file's it replaces, so
// a batch took longer as the catalog grew (docs/performance.md). A file of
// ten businesses is imported, then imported again, into a catalog of none
// and into one of 2,000 others, on both backends: the statements gorm
// sends are the same in number and text, and none reads the businesses
// without naming which.
func TestImportIndependentOfCatalogSize(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		a := admin.Actor{ID: "cli"}
		file := testkit.CatalogFile(10)
		statements := func() []string {
			t.Helper()
			captured := sqltest.Capture(t, s.DB(), "businesses")
			for range 2 { // a first import, then a replacing one
				if _, err := svc.ImportCatalog(ctx, a, file, "json"); err != nil {
					t.Fatal(err)
				}
			}
			var out []string
			for _, st := range captured() {
				q := strings.Join(strings.Fields(strings.ReplaceAll(st.SQL, "`", `"`)), " ")
				if strings.Contains(q, `FROM "businesses"`) && !strings.Contains(q, "WHERE") {
					t.Errorf("an import read every business: %s", q)
				}
				out = append(out, q)
			}
			return out
		}
		small := statements()
		now := time.Now().UTC()
		sqltest.FillFunc(t, s.DB(), func(tx *gorm.DB) error {
			return tx.Exec(`WITH RECURSIVE d(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM d WHERE i < 2000)
INSERT INTO businesses (id, reference, name, category, city, time_zone, agent_booking, created_at, updated_at)
SELECT 'biz-other-' || i, 'other-' || i, 'Other ' || i, 'appointment', 'Elsewhere', 'UTC', true, ?, ? FROM d`, now, now).Error
		})
		if err := s.DB().Exec(`DELETE FROM businesses WHERE reference LIKE 'biz-%'`).Error; err != nil {
			t.Fatal(err)
		}
		large := statements()
		if len(small) != len(large) || strings.Join(small, "\n") != strings.Join(large, "\n") {
			t.Errorf("importing into 2,000 other businesses sent %d statements, into none %d:\n%s\n---\n%s",
				len(large), len(small), strings.Join(large, "\n"), strings.Join(small, "\n"))
		}
	})
}
