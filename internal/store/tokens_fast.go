package store

import (
	"context"
	"time"
)

// TokenRef names one token session.
type TokenRef struct {
	Kind          TokenKind
	SignatureHash string
}

// TokenBatch is the writes of one token response: the conditional
// deactivations (the redeemed code or the rotated refresh token), the new
// sessions, and the sessions to delete.
type TokenBatch struct {
	// Deactivate must each flip an active session to inactive. When one of
	// them does not, nothing of the batch is written.
	Deactivate []TokenRef
	Create     []TokenSession
	Delete     []TokenRef
}

// Empty reports whether the batch writes nothing.
func (b TokenBatch) Empty() bool {
	return len(b.Deactivate) == 0 && len(b.Create) == 0 && len(b.Delete) == 0
}

// LinkState is what a refresh needs to know of the session's link.
type LinkState struct {
	Found      bool
	Status     string
	LastUsedAt time.Time
}

// FastTokens are combined token-session statements for the token endpoint's
// hot paths (CONTRACT §9): one round trip and one commit per token response
// instead of one per fosite storage call. It is embedded in no other
// interface; callers type-assert a Store and fall back to the plain methods.
type FastTokens interface {
	// ApplyTokenBatch writes b atomically, as a single statement where the
	// backend allows (PostgreSQL) and in one transaction otherwise. When a
	// deactivation finds its session inactive it answers ErrConflict, when
	// it finds none ErrNotFound; either way nothing is written. Of two
	// concurrent batches deactivating the same session exactly one succeeds.
	ApplyTokenBatch(ctx context.Context, b TokenBatch) error
	// GetTokenSessionLink returns a session (active or not) and the state of
	// its link (Found is false without a link id or when the link is gone),
	// in one statement.
	GetTokenSessionLink(ctx context.Context, kind TokenKind, signatureHash string) (TokenSession, LinkState, error)
	// GetRequestTokenSessions returns the session kind/signatureHash and
	// every session of the same request whose kind is among also, in one
	// statement; the named session comes first. ErrNotFound when it does
	// not exist.
	GetRequestTokenSessions(ctx context.Context, kind TokenKind, signatureHash string, also ...TokenKind) ([]TokenSession, error)
}

// TokenPrefetch is what a token request reads before fosite asks for it:
// the client, and the presented code or refresh token with the sessions of
// its request and its link.
type TokenPrefetch struct {
	Client      Client
	ClientFound bool
	// Sessions has the named session first, then those of its request
	// whose kinds were asked for; it is empty when the named one does not
	// exist.
	Sessions []TokenSession
	Link     LinkState // of the named session
}

// TokenPrefetcher reads a TokenPrefetch in one statement.
type TokenPrefetcher interface {
	PrefetchTokenRequest(ctx context.Context, clientID string, kind TokenKind, signatureHash string, also ...TokenKind) (TokenPrefetch, error)
}
