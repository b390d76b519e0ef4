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
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
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

// TestSQLiteWritersTakeTurns: 16 goroutines writing at once, in
// transactions (which read before they write) and outside them, all take
// their turn at the file's write gate (sqlitegate.go): every write
// succeeds and is there afterwards.
func TestSQLiteWritersTakeTurns(t *testing.T) {
	ctx := context.Background()
	s := sqltest.SQLiteWith(t, sqlstore.Options{BusyTimeout: 2 * time.Second})
	const workers, each = 16, 20
	now := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a := store.Account{ID: fmt.Sprintf("acct-%d-%d", w, i), Email: fmt.Sprintf("w%d-%d@example.com", w, i), CreatedAt: now, UpdatedAt: now}
				if i%2 == 0 {
					errs <- s.CreateAccount(ctx, a)
					continue
				}
				errs <- s.InTx(ctx, func(tx store.Store) error {
					if _, err := tx.GetAccount(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("account %s before it was made: %v", a.ID, err)
					}
					return tx.CreateAccount(ctx, a)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for w := range workers {
		for i := range each {
			if _, err := s.GetAccount(ctx, fmt.Sprintf("acct-%d-%d", w, i)); err != nil {
				t.Fatalf("account %d-%d: %v", w, i, err)
			}
		}
	}
}

// TestSQLiteGateBesideATransaction: while a transaction holds the write
// gate, a read on another connection answers at once, and a write on
// another connection (here from inside the transaction's own function, a
// call that could never succeed) gets ErrUnavailable after the busy
// timeout instead of waiting for itself; the transaction still commits.
func TestSQLiteGateBesideATransaction(t *testing.T) {
	ctx := context.Background()
	s := sqltest.SQLiteWith(t, sqlstore.Options{BusyTimeout: 100 * time.Millisecond})
	now := time.Now()
	if err := s.CreateAccount(ctx, store.Account{ID: "before", Email: "before@example.com", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	var outside error
	err := s.InTx(ctx, func(tx store.Store) error {
		if err := tx.CreateAccount(ctx, store.Account{ID: "inside", Email: "inside@example.com", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		if _, err := s.GetAccount(ctx, "before"); err != nil {
			return fmt.Errorf("read beside the transaction: %w", err)
		}
		t0 := time.Now()
		outside = s.CreateAccount(ctx, store.Account{ID: "outside", Email: "outside@example.com", CreatedAt: now, UpdatedAt: now})
		if d := time.Since(t0); d > 5*time.Second {
			return fmt.Errorf("the write beside the transaction waited %s", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(outside, store.ErrUnavailable) {
		t.Fatalf("write beside the transaction = %v, want ErrUnavailable", outside)
	}
	if _, err := s.GetAccount(ctx, "inside"); err != nil {
		t.Fatalf("the transaction's account: %v", err)
	}
	if _, err := s.GetAccount(ctx, "outside"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused write's account: %v, want ErrNotFound", err)
	}
}
