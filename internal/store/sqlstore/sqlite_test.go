package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// TestSQLiteOverlapAcrossProcesses: two stores on one file (as two server
// processes would have) booking overlapping slots of one staff member at
// once still confirm exactly one, because every SQLite transaction takes the
// write lock at BEGIN.
func TestSQLiteOverlapAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "shared.db")
	var stores []*sqlstore.Store
	for range 2 {
		s, err := sqlstore.Open(ctx, url, sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	if _, err := stores[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := stores[0].PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "b", Name: "B", Category: store.CategoryAppointment, TimeZone: "UTC"},
		Services: []store.Service{{Reference: "s", Name: "S", DurationMinutes: 30, Currency: "EUR"}},
		Staff:    []store.Staff{{Reference: "a", Name: "A", ServiceIDs: []string{"s"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2031, 5, 5, 9, 0, 0, 0, time.UTC)
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := base.Add(time.Duration(i) * time.Minute)
			errs[i] = stores[i%2].InsertBooking(ctx, store.Booking{ID: fmt.Sprint("bkg_", i), Reference: fmt.Sprint("LS-", i),
				BusinessID: c.Business.ID, ServiceID: c.Services[0].ID, StaffID: c.Staff[0].ID, StartsAt: start, EndsAt: start.Add(30 * time.Minute),
				BlockStart: start, BlockEnd: start.Add(30 * time.Minute), Status: store.BookingConfirmed, Version: 1, CreatedAt: base, UpdatedAt: base})
		}()
	}
	wg.Wait()
	ok, overlap := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrOverlap):
			overlap++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || overlap != n-1 {
		t.Fatalf("%d confirmed, %d ErrOverlap; want 1 and %d", ok, overlap, n-1)
	}
}
