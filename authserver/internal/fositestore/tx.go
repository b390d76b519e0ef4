package fositestore

import (
	"context"
	"errors"
	"sync"

	"github.com/ory/fosite/storage"

	"github.com/linkslot/linkslot/internal/store"
)

// fosite's storage.Transactional on top of the closure-style store.InTx.
//
// fosite opens a transaction around the writes of a token response (redeem
// the code or rotate the refresh token, then store the new access and
// refresh tokens) and around reuse revocation. BeginTX runs store.InTx on a
// goroutine that hands its transaction-bound Store back through the context
// and then waits for Commit or Rollback; fosite ends every transaction it
// begins on every path. Besides atomicity this turns three commits (three
// fsyncs on PostgreSQL, three write-lock acquisitions on SQLite) into one.

var _ storage.Transactional = (*Store)(nil)

type txKey struct{}

type txState struct {
	// joined is the enclosing transaction when BeginTX was called inside
	// one: it then commits or rolls back with that one, never alone.
	joined *txState
	tx     store.Store
	finish chan bool  // true: commit
	done   chan error // InTx's result
	once   sync.Once
	err    error
}

var errRollback = errors.New("fositestore: rollback")

// db returns the transaction-bound store when ctx carries one.
func (st *Store) db(ctx context.Context) store.Store {
	if ts, ok := ctx.Value(txKey{}).(*txState); ok {
		if ts.joined != nil {
			return ts.joined.tx
		}
		return ts.tx
	}
	return st.s
}

// BeginTX implements storage.Transactional.
func (st *Store) BeginTX(ctx context.Context) (context.Context, error) {
	if outer, ok := ctx.Value(txKey{}).(*txState); ok {
		if outer.joined != nil {
			outer = outer.joined
		}
		return context.WithValue(ctx, txKey{}, &txState{joined: outer}), nil
	}
	ts := &txState{finish: make(chan bool, 1), done: make(chan error, 1)}
	ready := make(chan store.Store, 1)
	go func() {
		ts.done <- st.s.InTx(ctx, func(tx store.Store) error {
			ready <- tx
			if <-ts.finish {
				return nil
			}
			return errRollback
		})
	}()
	select {
	case tx := <-ready:
		ts.tx = tx
		return context.WithValue(ctx, txKey{}, ts), nil
	case err := <-ts.done:
		return ctx, err
	}
}

func (ts *txState) end(commit bool) error {
	if ts.joined != nil {
		return nil
	}
	ts.once.Do(func() {
		ts.finish <- commit
		ts.err = <-ts.done
		if errors.Is(ts.err, errRollback) {
			ts.err = nil
		}
	})
	return ts.err
}

// Commit implements storage.Transactional.
func (st *Store) Commit(ctx context.Context) error {
	ts, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return nil
	}
	return ts.end(true)
}

// Rollback implements storage.Transactional. After a Commit it does nothing.
func (st *Store) Rollback(ctx context.Context) error {
	ts, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return nil
	}
	return ts.end(false)
}
