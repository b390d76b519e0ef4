package fositestore

import (
	"context"
	"errors"
	"sync"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/internal/store"
)

// The refresh grace (docs/reference.md §14, docs/refresh-grace.md): a
// refresh token presented again within Options.RefreshGrace of its
// rotation, while its successor is unused, is answered with that same
// successor, so parallel refreshes and a retried lost answer keep one
// chain instead of revoking the family.
//
// The rotation that spends a token records on its row, in the same
// conditional UPDATE (store.TokenBatch.Rotation), when it was rotated and
// the successor, sealed with Options.Seal and bound to the spent token's
// row: every replica can answer from the database, and the database alone
// yields no usable token. A presented token found spent is a grace answer
// when it was rotated less than the grace ago and the successor it names
// is still active and unexpired; fosite then runs the refresh as for an
// active token, except that the store spends nothing, stores no new
// refresh token, and requires the successor to be still active in the
// batch that stores the new access token (store.TokenBatch.Require), and
// Provider answers the successor instead of the refresh token fosite
// generated (GraceAnswer). A rotation that loses its race at commit (its
// prefetch saw the token active) is looked at again the same way. When
// the successor turns out used, by the time of the check or of the grace
// answer's commit, the presented token is reuse: the family is revoked
// and the request answers invalid_grant (Reused), as fosite does for a
// token read spent.

// refreshState is what the refresh grace knows of one token request; it
// lives in the request's Request (Begin), whatever fast paths are on.
type refreshState struct {
	mu sync.Mutex
	// grant is set for a refresh grant (RefreshGrant): introspection and
	// revocation read a spent token as spent.
	grant bool
	// issued is the refresh token fosite generated in this request
	// (NoteRefreshToken), sealed into the spent token's row.
	issued string
	// grace is set when the request is answered from a spent token's
	// successor.
	grace *graceAnswer
	// reused is set when the request was found to present a used token
	// after fosite had read it as usable; the family has been revoked.
	reused bool
}

// graceAnswer is a grace answer: the presented (spent) token and its
// successor.
type graceAnswer struct {
	presented store.TokenRef
	successor string
	next      store.TokenRef
	requestID string
}

// RefreshGrant marks the token request of ctx (a context from Begin) as
// a refresh grant, the one request the refresh grace answers.
func RefreshGrant(ctx context.Context) {
	if rs := refreshOf(ctx); rs != nil {
		rs.mu.Lock()
		rs.grant = true
		rs.mu.Unlock()
	}
}

// NoteRefreshToken records the refresh token fosite generated in the token
// request of ctx (a context from Begin): a rotation seals it into the
// row of the token it spends. provider.Provider's refresh-token strategy
// calls it.
func NoteRefreshToken(ctx context.Context, token string) {
	if rs := refreshOf(ctx); rs != nil {
		rs.mu.Lock()
		rs.issued = token
		rs.mu.Unlock()
	}
}

// GraceAnswer reports whether the token request of ctx is answered from a
// spent refresh token's successor, and that successor: the refresh token
// the answer must carry instead of the one fosite generated.
func GraceAnswer(ctx context.Context) (successor string, ok bool) {
	return RequestOf(ctx).GraceAnswer()
}

// GraceAnswer is GraceAnswer for the token request of req (nil: none).
func (req *Request) GraceAnswer() (successor string, ok bool) {
	if req == nil {
		return "", false
	}
	rs := &req.refresh
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.grace == nil || rs.reused {
		return "", false
	}
	return rs.grace.successor, true
}

// Reused reports whether the token request of ctx presented a refresh
// token found used only when its writes were committed: the family has
// been revoked, and the request answers invalid_grant.
func Reused(ctx context.Context) bool {
	rs := refreshOf(ctx)
	if rs == nil {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.reused
}

func (rs *refreshState) answer(g *graceAnswer) {
	rs.mu.Lock()
	rs.grace = g
	rs.mu.Unlock()
}

// graceOf is the grace answer for ref, if the request is one.
func (rs *refreshState) graceOf(ref store.TokenRef) *graceAnswer {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.grace != nil && rs.grace.presented == ref {
		return rs.grace
	}
	return nil
}

// current is the request's grace answer, if it is one.
func (rs *refreshState) current() *graceAnswer {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.grace
}

func (rs *refreshState) isGrant() bool {
	if rs == nil {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.grant
}

func (rs *refreshState) issuedToken() string {
	if rs == nil {
		return ""
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.issued
}

// UseRefreshSignature gives the store fosite's refresh token signature, by
// which a spent token's successor finds its row. Without it there is no
// refresh grace.
func (st *Store) UseRefreshSignature(sig func(ctx context.Context, token string) string) {
	st.refreshSignature = sig
}

// graceOn reports whether the refresh grace is configured.
func (st *Store) graceOn() bool {
	return st.opts.RefreshGrace > 0 && st.opts.Seal != nil && st.refreshSignature != nil
}

// successorAD binds a sealed successor to the row of the token it
// replaced.
func successorAD(spentHash string) []byte { return []byte("refresh successor/" + spentHash) }

// rotation is what the rotation spending ref records for the grace: now,
// and the refresh token this request issues, sealed; nil when the grace
// is off or the request issued none.
func (st *Store) rotation(ctx context.Context, ref store.TokenRef) *store.Rotation {
	if !st.graceOn() {
		return nil
	}
	issued := refreshOf(ctx).issuedToken()
	if issued == "" {
		return nil
	}
	return &store.Rotation{At: st.opts.Clock(), Successor: st.opts.Seal.Seal([]byte(issued), successorAD(ref.SignatureHash))}
}

// graceFor answers the grace answer for the spent refresh token ts, read
// on db, or nil when ts is reuse: rotated more than the grace ago, or not
// by a rotation that sealed a successor, or its successor used, gone or
// expired (the successor's expiry is capped at the family's absolute
// lifetime, so a grace answer never outlives it).
func (st *Store) graceFor(ctx context.Context, db store.Tokens, ts store.TokenSession) (*graceAnswer, error) {
	if !st.graceOn() || !refreshOf(ctx).isGrant() || ts.Kind != store.KindRefreshToken || ts.RotatedAt.IsZero() || len(ts.Successor) == 0 {
		return nil, nil
	}
	now := st.opts.Clock()
	if !now.Before(ts.RotatedAt.Add(st.opts.RefreshGrace)) {
		return nil, nil
	}
	plain, err := st.opts.Seal.Open(ts.Successor, successorAD(ts.SignatureHash))
	if err != nil {
		// Sealed under another secret key, whose refresh tokens no longer
		// verify either.
		return nil, nil
	}
	successor := string(plain)
	next := store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: store.HashSecret(st.refreshSignature(ctx, successor))}
	s, err := db.GetTokenSession(ctx, next.Kind, next.SignatureHash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !s.Active || s.RequestID != ts.RequestID || !now.Before(s.ExpiresAt) {
		return nil, nil
	}
	return &graceAnswer{presented: store.TokenRef{Kind: ts.Kind, SignatureHash: ts.SignatureHash},
		successor: successor, next: next, requestID: ts.RequestID}, nil
}

// settle writes a transaction's batch b on db. With the grace on, a refresh
// rotation that finds its token spent by another rotation (one that
// recorded its successor, after this request read the token active) is
// looked at again as a presented spent token: a grace answer then writes
// the batch's access token, requiring the successor; reuse (the successor
// used already) revokes the family. A grace answer whose successor was
// used since its check is reuse too.
func (st *Store) settle(ctx context.Context, db store.Tokens, b store.TokenBatch) error {
	err := st.applyBatch(ctx, db, b)
	rs := refreshOf(ctx)
	if !errors.Is(err, fosite.ErrInactiveToken) || rs == nil || !st.graceOn() {
		return err
	}
	if len(b.Require) > 0 {
		if g := rs.current(); g != nil {
			return st.reused(ctx, db, g.requestID, err)
		}
		return err
	}
	if b.Rotation == nil || len(b.Deactivate) != 1 {
		return err
	}
	ref := b.Deactivate[0]
	spent, gerr := db.GetTokenSession(ctx, ref.Kind, ref.SignatureHash)
	if gerr != nil || spent.Active || spent.RotatedAt.IsZero() {
		// Revoked (the family with it), or rotated with the grace off (a
		// replica configured so, or one from before it): the answer is
		// fosite's, a retryable invalid_request, as without the grace.
		return err
	}
	g, gerr := st.graceFor(ctx, db, spent)
	if gerr != nil {
		return gerr
	}
	if g == nil {
		return st.reused(ctx, db, spent.RequestID, err)
	}
	rs.answer(g)
	gb := store.TokenBatch{Require: []store.TokenRef{g.next}, Delete: b.Delete}
	for _, c := range b.Create {
		if c.Kind != store.KindRefreshToken {
			gb.Create = append(gb.Create, c)
		}
	}
	if err := st.applyBatch(ctx, db, gb); errors.Is(err, fosite.ErrInactiveToken) {
		return st.reused(ctx, db, g.requestID, err)
	} else if err != nil {
		return err
	}
	return nil
}

// reused revokes the family of requestID, every token of it in one
// statement, as fosite does on reuse, and marks the request; it answers
// cause.
func (st *Store) reused(ctx context.Context, db store.Tokens, requestID string, cause error) error {
	rs := refreshOf(ctx)
	rs.mu.Lock()
	rs.reused = true
	rs.mu.Unlock()
	if err := db.DeactivateRequest(ctx, "", requestID); err != nil {
		return err
	}
	return cause
}
