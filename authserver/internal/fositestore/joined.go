package fositestore

import (
	"context"
	"errors"
	"sync"

	"github.com/linkslot/linkslot/internal/store"
)

// joinedDeletes are the session deletions of one token request that join
// the token batch redeeming its code instead of costing a statement and a
// commit each: the PKCE session, which fosite deletes before it redeems
// the code (held between BeginDeferral and EndDeferral), and the OpenID
// session, deleted by the batch before fosite asks. A nil *joinedDeletes
// joins nothing.
type joinedDeletes struct {
	mu sync.Mutex
	// deferring is set between BeginDeferral and EndDeferral.
	deferring bool
	// waiting are deferred deletions no batch has taken yet; taken are
	// those a batch took, in case it is not written.
	waiting, taken []store.TokenRef
	// useUp are codes whose PKCE session, kept in their row, was deleted
	// (fold.go): the redemption's batch deactivates them; if the request
	// fails, EndDeferral does.
	useUp []store.TokenRef
	// done are sessions a batch deletes: fosite's own delete of them is a
	// no-op (the read cache still answers for them, since fosite reads the
	// OpenID session after the commit).
	done map[store.TokenRef]bool
}

// newJoinedDeletes is one request's joined deletions (Begin, unless
// Options.NoJoinedDeletes).
func newJoinedDeletes() *joinedDeletes {
	return &joinedDeletes{done: map[store.TokenRef]bool{}}
}

// BeginDeferral lets the PKCE-session deletion of the token request in ctx
// (a context from Begin) join the batch that redeems the code. The caller
// must call EndDeferral when the request is answered, on every path: it
// writes whatever deletion is still pending, so a failed attempt still uses
// up the PKCE session exactly as an immediate deletion would.
func (st *Store) BeginDeferral(ctx context.Context) {
	if jd := joinedOf(ctx); jd != nil {
		jd.mu.Lock()
		jd.deferring = true
		jd.mu.Unlock()
	}
}

// EndDeferral writes the deletions still pending (failed: also those taken
// by a batch that was not written) and stops deferring.
func (st *Store) EndDeferral(ctx context.Context, failed bool) error {
	jd := joinedOf(ctx)
	if jd == nil {
		return nil
	}
	jd.mu.Lock()
	refs := jd.waiting
	if failed {
		refs = append(refs, jd.taken...)
	}
	var useUp []store.TokenRef
	if failed {
		useUp = jd.useUp
	}
	jd.deferring, jd.waiting, jd.taken, jd.useUp = false, nil, nil, nil
	jd.mu.Unlock()
	for _, code := range useUp {
		// A code already redeemed (by this request before it failed, or
		// by another) or gone is used up already.
		err := st.s.ApplyTokenBatch(ctx, store.TokenBatch{Deactivate: []store.TokenRef{code}})
		if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if len(refs) == 0 {
		return nil
	}
	return st.applyBatch(ctx, st.s, store.TokenBatch{Delete: refs})
}

// deferUseUp records that the code of ref is to be used up (see useUp)
// when deferring outside a transaction; otherwise it does nothing.
func (jd *joinedDeletes) deferUseUp(ctx context.Context, code store.TokenRef) {
	if jd == nil || txOf(ctx) != nil {
		return
	}
	jd.mu.Lock()
	defer jd.mu.Unlock()
	if jd.deferring {
		jd.useUp = append(jd.useUp, code)
	}
}

// deferDelete holds ref's deletion when deferring outside a transaction.
func (jd *joinedDeletes) deferDelete(ctx context.Context, ref store.TokenRef) bool {
	if jd == nil || txOf(ctx) != nil {
		return false
	}
	jd.mu.Lock()
	defer jd.mu.Unlock()
	if !jd.deferring {
		return false
	}
	jd.waiting = append(jd.waiting, ref)
	return true
}

// take moves the deferred deletions into a batch.
func (jd *joinedDeletes) take() []store.TokenRef {
	if jd == nil {
		return nil
	}
	jd.mu.Lock()
	defer jd.mu.Unlock()
	refs := jd.waiting
	jd.taken = append(jd.taken, refs...)
	jd.waiting = nil
	return refs
}

// join records that a batch deletes ref; without joinedDeletes it reports
// false and fosite's own delete follows.
func (jd *joinedDeletes) join(ref store.TokenRef) bool {
	if jd == nil {
		return false
	}
	jd.mu.Lock()
	defer jd.mu.Unlock()
	jd.done[ref] = true
	return true
}

// isDone reports whether a batch deletes ref already.
func (jd *joinedDeletes) isDone(ref store.TokenRef) bool {
	if jd == nil {
		return false
	}
	jd.mu.Lock()
	defer jd.mu.Unlock()
	return jd.done[ref]
}
