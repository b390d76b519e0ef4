package sqlstore_test

import (
	"context"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// The tests that seed data on a schema older than migration 00022 and then
// upgrade write catalogs with the current store, which writes the catalog
// columns 00022 adds (businesses.confirmation_window_minutes,
// services.requires_confirmation). addColumns22 adds them as 00022 declares
// them, for the seeding only; dropColumns22 drops them again before the
// test migrates.
func addColumns22(t testing.TB, s *sqlstore.Store) {
	t.Helper()
	exec(t, s, `ALTER TABLE businesses ADD COLUMN confirmation_window_minutes integer NOT NULL DEFAULT 0`,
		`ALTER TABLE services ADD COLUMN requires_confirmation boolean NOT NULL DEFAULT false`)
}

func dropColumns22(t testing.TB, s *sqlstore.Store) {
	t.Helper()
	exec(t, s, `ALTER TABLE services DROP COLUMN requires_confirmation`,
		`ALTER TABLE businesses DROP COLUMN confirmation_window_minutes`)
}

func exec(t testing.TB, s *sqlstore.Store, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if err := s.DB().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// putCatalogBefore22 puts c on a schema older than 00022.
func putCatalogBefore22(t testing.TB, s *sqlstore.Store, c store.Catalog) store.Catalog {
	t.Helper()
	addColumns22(t, s)
	defer dropColumns22(t, s)
	out, err := s.PutCatalog(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
