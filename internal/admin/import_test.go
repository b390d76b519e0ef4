package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
