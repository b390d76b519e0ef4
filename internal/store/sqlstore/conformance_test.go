package sqlstore_test

import (
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/store/storetest"
)

// TestConformance runs the storage conformance suite on every backend; the
// subtests are named "sqlite/..." and "postgres/...".
func TestConformance(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			storetest.RunTests(t, func(t testing.TB) store.Store { return b.Open(t) })
		})
	}
}
