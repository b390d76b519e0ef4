package store

import (
	"context"
	"time"
)

// Leases are named, time-bounded claims that replicas share through the
// database: at most one holder at a time, and a lease nobody renews frees
// itself when it expires.
type Leases interface {
	// TryLease gives the lease name to holder until until, if it is free,
	// expired at now, or already holder's (a renewal), and reports whether
	// holder has it.
	TryLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error)
	// ReleaseLease frees name if holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Sweeps delete rows that are no longer needed, in bounded batches, for
// internal/janitor. Each deletes at most limit rows, skips rows another
// transaction holds (PostgreSQL: FOR UPDATE SKIP LOCKED), and reports how
// many it deleted.
type Sweeps interface {
	Leases
	// SweepTokenSessions deletes token sessions of kind that expired
	// before before, active or not.
	SweepTokenSessions(ctx context.Context, kind TokenKind, before time.Time, limit int) (int64, error)
	// SweepIdempotency deletes idempotency records that expired before
	// before.
	SweepIdempotency(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepClientAssertions deletes the used client-assertion ids
	// (private_key_jwt jti's) whose assertions expired before before.
	SweepClientAssertions(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepAccountTokens deletes e-mail links (verification and reset),
	// used or not, that expired before before.
	SweepAccountTokens(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepMemberInvitations deletes invitations of staff to businesses,
	// used or not, that expired before before.
	SweepMemberInvitations(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepWebAuthnCeremonies deletes passkey ceremonies that expired
	// before before, unfinished (every page that offers a passkey starts
	// one).
	SweepWebAuthnCeremonies(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepWebSessions deletes sign-in sessions that expired before
	// before: a session is deleted when it is presented after its expiry
	// or its person signs out, and one that is never presented again (a
	// closed browser, a cleared cookie) would otherwise stay.
	SweepWebSessions(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepOutbox deletes outbox messages that were delivered or failed
	// and were created before before, with their delivery attempts;
	// queued messages are never swept.
	SweepOutbox(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepUnusedRegistrations deletes dynamically registered clients
	// (ClientRegistrations) registered before before that no person has
	// linked (approved) yet, with their registrations.
	SweepUnusedRegistrations(ctx context.Context, before time.Time, limit int) (int64, error)
	// SweepRateWindows deletes the rate-window rows whose expiry second is
	// before before. It reads the whole table and deletes every such row,
	// whatever limit: the table holds live windows and a minute of expired
	// ones, and an index on the expiry would cost every counted hit an
	// index update.
	SweepRateWindows(ctx context.Context, before time.Time, limit int) (int64, error)
}
