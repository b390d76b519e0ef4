package fositestore

import (
	"context"
	"errors"
	"sync"

	"github.com/ory/fosite"
	"github.com/ory/fosite/storage"

	"github.com/linkslot/linkslot/internal/store"
)

// fosite's storage.Transactional on top of store.Begin.
//
// fosite opens a transaction around the writes of a token response (redeem
// the code or rotate the refresh token, then store the new access and
// refresh tokens) and around reuse revocation; the authorize endpoint opens
// one around the code, PKCE and OpenID sessions it stores, and records a
// consent approval in it through TxStore.
//
// A transaction starts as a batch: the writes fosite makes in it (new sessions, the conditional deactivation
// of the code or refresh token) are collected, and Commit sends them as one
// store.TokenBatch — on PostgreSQL a single statement, so a token response
// costs one round trip and one commit for its writes, with no BEGIN or
// COMMIT of its own. The deactivation stays the one conditional UPDATE that
// decides a race: when it finds the session already used, nothing of the
// batch is written and Commit answers the error the storage call would have
// answered (fosite.ErrInactiveToken for a refresh token,
// fosite.ErrInvalidatedAuthorizeCode for a code), which fosite handles like
// that call's error. Any other storage call inside the transaction (a read,
// a family revocation) turns it into a database transaction first: it
// begins one, writes the pending batch in it, and from then on every call
// runs in it, so order and atomicity hold on every path.
//
// The database transaction is store.Begin's, bound to the context BeginTX
// was given; fosite ends every transaction it begins on every path.

var _ storage.Transactional = (*Store)(nil)

type txKey struct{}

type txState struct {
	// joined is the enclosing transaction when BeginTX was called inside
	// one: it then commits or rolls back with that one, never alone.
	joined *txState
	st     *Store
	ctx    context.Context

	mu      sync.Mutex
	pending store.TokenBatch
	// code is the authorization code waiting in pending, which the PKCE
	// and OpenID sessions of its request fold into (fold.go).
	code  *pendingCode
	tx    store.Tx // the database transaction, once begun
	ended bool
	err   error
}

func txOf(ctx context.Context) *txState {
	ts, _ := ctx.Value(txKey{}).(*txState)
	if ts != nil && ts.joined != nil {
		return ts.joined
	}
	return ts
}

// db returns the store to run a call on: the database transaction when ctx
// carries a transaction (beginning it, and writing what is pending, first),
// the store itself otherwise.
func (st *Store) db(ctx context.Context) (store.Tokens, error) {
	ts := txOf(ctx)
	if ts == nil {
		return st.s, nil
	}
	return ts.database()
}

// TxStore returns the store bound to the database transaction of ctx, a
// context from BeginTX, beginning it now: what the caller writes through it
// commits or rolls back with what fosite writes in the same transaction.
// The authorize endpoint records a person's approval this way, beside the
// code it issues.
func (st *Store) TxStore(ctx context.Context) (store.Store, error) {
	ts := txOf(ctx)
	if ts == nil {
		return nil, errors.New("fositestore: TxStore outside a transaction")
	}
	tx, err := ts.database()
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// database begins the database transaction, writes what is pending in it,
// and returns it.
func (ts *txState) database() (store.Tx, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.ended {
		return nil, errors.New("fositestore: transaction already ended")
	}
	if err := ts.begin(); err != nil {
		return nil, err
	}
	if err := ts.flush(); err != nil {
		return nil, err
	}
	return ts.tx, nil
}

// begin starts the database transaction (ts.mu held).
func (ts *txState) begin() error {
	if ts.tx != nil {
		return nil
	}
	tx, err := ts.st.s.Begin(ts.ctx)
	if err != nil {
		ts.ended, ts.err = true, err
		return err
	}
	ts.tx = tx
	return nil
}

// flush writes the pending batch in the database transaction (ts.mu held).
func (ts *txState) flush() error {
	if ts.pending.Empty() {
		return nil
	}
	b := ts.pending
	ts.pending, ts.code = store.TokenBatch{}, nil
	return ts.st.settle(ts.ctx, ts.tx, b)
}

// applyBatch writes b on s with the fosite error of its deactivation.
func (st *Store) applyBatch(ctx context.Context, s store.Tokens, b store.TokenBatch) error {
	err := s.ApplyTokenBatch(ctx, b)
	if err == nil || len(b.Deactivate) == 0 {
		return err
	}
	switch {
	case errors.Is(err, store.ErrConflict) && b.Deactivate[0].Kind == store.KindAuthorizeCode:
		return fosite.ErrInvalidatedAuthorizeCode
	case errors.Is(err, store.ErrConflict):
		return fosite.ErrInactiveToken
	case errors.Is(err, store.ErrNotFound):
		return fosite.ErrNotFound
	}
	return err
}

// write adds to the pending batch of ctx's transaction, or writes b now.
func (st *Store) write(ctx context.Context, b store.TokenBatch) error {
	if ts := txOf(ctx); ts != nil {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if ts.ended {
			return errors.New("fositestore: transaction already ended")
		}
		ts.pending.Deactivate = append(ts.pending.Deactivate, b.Deactivate...)
		if b.Rotation != nil {
			ts.pending.Rotation = b.Rotation
		}
		ts.pending.Require = append(ts.pending.Require, b.Require...)
		ts.pending.Create = append(ts.pending.Create, b.Create...)
		ts.pending.Delete = append(ts.pending.Delete, b.Delete...)
		return nil
	}
	return st.applyBatch(ctx, st.s, b)
}

// BeginTX implements storage.Transactional.
func (st *Store) BeginTX(ctx context.Context) (context.Context, error) {
	if outer := txOf(ctx); outer != nil {
		return context.WithValue(ctx, txKey{}, &txState{joined: outer}), nil
	}
	return context.WithValue(ctx, txKey{}, &txState{st: st, ctx: ctx}), nil
}

func (ts *txState) end(commit bool) error {
	if ts.joined != nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.ended {
		// A Rollback after a failed Commit has nothing left to undo; fosite
		// would report its error as a second failure.
		if !commit {
			return nil
		}
		return ts.err
	}
	ts.ended = true
	if ts.tx == nil {
		if commit && !ts.pending.Empty() {
			ts.err = ts.st.settle(ts.ctx, ts.st.s, ts.pending)
		}
		ts.pending = store.TokenBatch{}
		return ts.err
	}
	if !commit {
		ts.err = ts.tx.Rollback()
		return ts.err
	}
	if err := ts.flush(); err != nil {
		ts.tx.Rollback()
		ts.err = err
		return err
	}
	ts.err = ts.tx.Commit()
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
