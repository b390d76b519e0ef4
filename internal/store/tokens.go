package store

import (
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
	// Rotation, when set, is written on the sessions Deactivate flips, in
	// the same statement: a refresh rotation with the refresh grace on.
	Rotation *Rotation
	// Require must each be an active session, and stay so until the batch
	// is written (a grace answer's successor). When one is not, nothing of
	// the batch is written, as for Deactivate.
	Require []TokenRef
	Create  []TokenSession
	Delete  []TokenRef
}

// Rotation is what a refresh rotation records on the token it spends
// (TokenSession.RotatedAt and Successor).
type Rotation struct {
	At        time.Time
	Successor []byte // sealed
}

// Empty reports whether the batch writes nothing.
func (b TokenBatch) Empty() bool {
	return len(b.Deactivate) == 0 && len(b.Require) == 0 && len(b.Create) == 0 && len(b.Delete) == 0
}

// LinkState is what a refresh needs to know of the session's link.
type LinkState struct {
	Found      bool
	Status     string
	LastUsedAt time.Time
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
