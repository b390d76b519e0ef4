package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

var _ store.Sweeps = (*Store)(nil)

// TryLease implements store.Leases with one upsert whose update applies
// only to an expired lease or the holder's own.
func (s *Store) TryLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error) {
	res := s.q(ctx).Exec(`INSERT INTO janitor_leases (name, holder, expires_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE janitor_leases.expires_at < ? OR janitor_leases.holder = excluded.holder`,
		name, holder, store.UTC(until), store.UTC(now))
	if res.Error != nil {
		return false, translate(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReleaseLease implements store.Leases.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	return translate(s.q(ctx).Exec(`DELETE FROM janitor_leases WHERE name = ? AND holder = ?`, name, holder).Error)
}

// SweepTokenSessions implements store.Sweeps. The batch is chosen by the
// index on (kind, expires_at) (migration 00010; TestGrowingTablePlansSQLite)
// and deleted by primary key; on PostgreSQL rows that a token
// request holds are skipped, so the sweep never waits for the hot path.
func (s *Store) SweepTokenSessions(ctx context.Context, kind store.TokenKind, before time.Time, limit int) (int64, error) {
	return s.sweep(ctx, `DELETE FROM token_sessions WHERE (kind, signature_hash) IN (
SELECT kind, signature_hash FROM token_sessions WHERE expires_at < ? AND kind = ? ORDER BY expires_at LIMIT ?`+s.skipLocked()+`)`,
		store.UTC(before), string(kind), limit)
}

// SweepIdempotency implements store.Sweeps.
func (s *Store) SweepIdempotency(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "idempotency_records", "link_id, tool, key", before, limit)
}

// SweepClientAssertions implements store.Sweeps.
func (s *Store) SweepClientAssertions(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "client_assertions", "jti_hash", before, limit)
}

// SweepAccountTokens implements store.Sweeps.
func (s *Store) SweepAccountTokens(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "account_tokens", "token_hash", before, limit)
}

// SweepMemberInvitations implements store.Sweeps (the expiry index is
// migration 00023's).
func (s *Store) SweepMemberInvitations(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "member_invitations", "token_hash", before, limit)
}

// SweepWebAuthnCeremonies implements store.Sweeps.
func (s *Store) SweepWebAuthnCeremonies(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "webauthn_ceremonies", "id_hash", before, limit)
}

// SweepWebSessions implements store.Sweeps (the expiry index is migration
// 00011's).
func (s *Store) SweepWebSessions(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweepExpired(ctx, "web_sessions", "id_hash", before, limit)
}

// sweepExpired deletes up to limit rows of table that expired before
// before, oldest first: chosen by the table's index on expires_at and
// deleted by key (its primary key's columns), skipping on PostgreSQL rows
// another transaction holds. table and key are constants of this file.
func (s *Store) sweepExpired(ctx context.Context, table, key string, before time.Time, limit int) (int64, error) {
	return s.sweep(ctx, `DELETE FROM `+table+` WHERE (`+key+`) IN (
SELECT `+key+` FROM `+table+` WHERE expires_at < ? ORDER BY expires_at LIMIT ?`+s.skipLocked()+`)`,
		store.UTC(before), limit)
}

func (s *Store) sweep(ctx context.Context, q string, args ...any) (int64, error) {
	res := s.q(ctx).Exec(q, args...)
	if res.Error != nil {
		return 0, translate(res.Error)
	}
	return res.RowsAffected, nil
}

func (s *Store) skipLocked() string {
	if s.dialect == "postgres" {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// SweepOutbox implements store.Sweeps, by the (status, created_at) index;
// the delivery attempts go with their message (ON DELETE CASCADE). The
// batch is any limit due rows, not the oldest: ordering two statuses by
// created_at sorts every due row for each batch (PostgreSQL, 513,000 due
// of 600,000: 381 ms and an external sort per batch, against 39 ms
// without; 10,000 due: a bitmap scan and sort of all 10,000, against an
// index scan that stops at the limit).
func (s *Store) SweepOutbox(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweep(ctx, `DELETE FROM outbox_messages WHERE id IN (
SELECT id FROM outbox_messages WHERE status IN ('delivered', 'failed') AND created_at < ? LIMIT ?`+s.skipLocked()+`)`,
		store.UTC(before), limit)
}
