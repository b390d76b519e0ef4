package storetest

import (
	"context"
	"sync"

	"github.com/linkslot/linkslot/internal/store"
)

// Faults is a store.Store that fails on purpose, for tests of what a failure
// leaves behind. Hand it to the code under test in place of the store it
// wraps; its transaction-bound stores (InTx and Begin) inject the same
// faults.
type Faults struct {
	store.Store
	set *faultSet
}

type faultSet struct {
	mu                sync.Mutex
	afterBookingWrite error
	afterTokenWrite   error
}

var _ store.Store = (*Faults)(nil)

// WithFaults wraps s; it injects nothing until told to.
func WithFaults(s store.Store) *Faults { return &Faults{Store: s, set: &faultSet{}} }

// FailAfterBookingWrite makes every InsertBooking and UpdateBooking answer
// err after its write succeeded, inside the write's transaction: the write
// rolls back, and so does the transaction around it. nil stops the fault.
func (f *Faults) FailAfterBookingWrite(err error) { f.set.put(&f.set.afterBookingWrite, err) }

func (f *Faults) afterBookingWrite() error { return f.set.get(&f.set.afterBookingWrite) }

func (s *faultSet) put(fault *error, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*fault = err
}

func (s *faultSet) get(fault *error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *fault
}

// FailAfterTokenWrite makes every ApplyTokenBatch answer err after its
// write succeeded, inside the write's transaction: the batch rolls back,
// and so does the transaction around it. nil stops the fault.
func (f *Faults) FailAfterTokenWrite(err error) { f.set.put(&f.set.afterTokenWrite, err) }

func (f *Faults) afterTokenWrite() error { return f.set.get(&f.set.afterTokenWrite) }

// InTx implements store.Store; fn's store injects the same faults.
func (f *Faults) InTx(ctx context.Context, fn func(store.Store) error) error {
	return f.Store.InTx(ctx, func(tx store.Store) error { return fn(&Faults{Store: tx, set: f.set}) })
}

// Begin implements store.Store; the transaction injects the same faults.
func (f *Faults) Begin(ctx context.Context) (store.Tx, error) {
	tx, err := f.Store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &faultTx{Faults: Faults{Store: tx, set: f.set}, tx: tx}, nil
}

// faultTx is a transaction from Begin that injects its store's faults.
type faultTx struct {
	Faults
	tx store.Tx
}

func (t *faultTx) Commit() error   { return t.tx.Commit() }
func (t *faultTx) Rollback() error { return t.tx.Rollback() }

// ApplyTokenBatch implements store.Tokens.
func (f *Faults) ApplyTokenBatch(ctx context.Context, b store.TokenBatch) error {
	return f.failAfter(ctx, f.afterTokenWrite(), func(s store.Store) error { return s.ApplyTokenBatch(ctx, b) })
}

// failAfter runs write on the wrapped store when fault is nil. Otherwise it
// runs write in a transaction of its own (a savepoint inside one) and
// answers fault after it succeeded, so the write rolls back.
func (f *Faults) failAfter(ctx context.Context, fault error, write func(store.Store) error) error {
	if fault == nil {
		return write(f.Store)
	}
	return f.Store.InTx(ctx, func(tx store.Store) error {
		if err := write(tx); err != nil {
			return err
		}
		return fault
	})
}

// InsertBooking implements store.Bookings.
func (f *Faults) InsertBooking(ctx context.Context, b store.Booking) error {
	return f.failAfter(ctx, f.afterBookingWrite(), func(s store.Store) error { return s.InsertBooking(ctx, b) })
}

// UpdateBooking implements store.Bookings.
func (f *Faults) UpdateBooking(ctx context.Context, id string, fn func(store.Booking) (store.Booking, error)) (store.Booking, error) {
	var out store.Booking
	err := f.failAfter(ctx, f.afterBookingWrite(), func(s store.Store) error {
		var err error
		out, err = s.UpdateBooking(ctx, id, fn)
		return err
	})
	if err != nil {
		return store.Booking{}, err
	}
	return out, nil
}
