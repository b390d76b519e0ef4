package storetest

import (
	"context"
	"sync"

	"github.com/linkslot/linkslot/internal/store"
)

// Faults is a store.Store that fails on purpose, for tests of what a failure
// leaves behind. Hand it to the code under test in place of the store it
// wraps; its transaction-bound stores (InTx) inject the same faults.
// Transactions from Begin are the wrapped store's, without faults.
type Faults struct {
	store.Store
	set *faultSet
}

type faultSet struct {
	mu                sync.Mutex
	afterBookingWrite error
}

var _ store.Store = (*Faults)(nil)

// WithFaults wraps s; it injects nothing until told to.
func WithFaults(s store.Store) *Faults { return &Faults{Store: s, set: &faultSet{}} }

// FailAfterBookingWrite makes every InsertBooking and UpdateBooking answer
// err after its write succeeded, inside the write's transaction: the write
// rolls back, and so does the transaction around it. nil stops the fault.
func (f *Faults) FailAfterBookingWrite(err error) {
	f.set.mu.Lock()
	defer f.set.mu.Unlock()
	f.set.afterBookingWrite = err
}

func (f *Faults) afterBookingWrite() error {
	f.set.mu.Lock()
	defer f.set.mu.Unlock()
	return f.set.afterBookingWrite
}

// InTx implements store.Store; fn's store injects the same faults.
func (f *Faults) InTx(ctx context.Context, fn func(store.Store) error) error {
	return f.Store.InTx(ctx, func(tx store.Store) error { return fn(&Faults{Store: tx, set: f.set}) })
}

// InsertBooking implements store.Bookings.
func (f *Faults) InsertBooking(ctx context.Context, b store.Booking) error {
	fault := f.afterBookingWrite()
	if fault == nil {
		return f.Store.InsertBooking(ctx, b)
	}
	return f.Store.InTx(ctx, func(tx store.Store) error {
		if err := tx.InsertBooking(ctx, b); err != nil {
			return err
		}
		return fault
	})
}

// UpdateBooking implements store.Bookings.
func (f *Faults) UpdateBooking(ctx context.Context, id string, fn func(store.Booking) (store.Booking, error)) (store.Booking, error) {
	fault := f.afterBookingWrite()
	if fault == nil {
		return f.Store.UpdateBooking(ctx, id, fn)
	}
	err := f.Store.InTx(ctx, func(tx store.Store) error {
		if _, err := tx.UpdateBooking(ctx, id, fn); err != nil {
			return err
		}
		return fault
	})
	return store.Booking{}, err
}
