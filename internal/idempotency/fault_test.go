package idempotency_test

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/store"
)

// newKeeper is a Keeper over f, in f's transactions.
func newKeeper(f *faultStore, clock store.Clock, ttl time.Duration) *idempotency.Keeper[store.Store] {
	return idempotency.New(f, f.InTx, clock, ttl)
}

// faultStore decorates a store for tests, at the two points of Keeper.Run
// a test needs to reach: beforeTx runs before each transaction begins
// (Run begins one right after its fast-path lookup missed), and
// beforeComplete inside the transaction, after the mutation's writes and
// before the answer is stored; its error aborts the transaction.
type faultStore struct {
	store.Store
	beforeTx       func()
	beforeComplete func() error
}

func (f *faultStore) InTx(ctx context.Context, fn func(store.Store) error) error {
	if f.beforeTx != nil {
		f.beforeTx()
	}
	return f.Store.InTx(ctx, func(tx store.Store) error { return fn(&faultTx{Store: tx, f: f}) })
}

type faultTx struct {
	store.Store
	f *faultStore
}

func (t *faultTx) CompleteIdempotency(ctx context.Context, linkID, tool, key string, response []byte) error {
	if t.f.beforeComplete != nil {
		if err := t.f.beforeComplete(); err != nil {
			return err
		}
	}
	return t.Store.CompleteIdempotency(ctx, linkID, tool, key, response)
}
