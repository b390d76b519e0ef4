package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

func toToken(r tokenRow) store.TokenSession {
	t := store.TokenSession{Kind: store.TokenKind(r.Kind), SignatureHash: r.SignatureHash, RequestID: r.RequestID,
		ClientID: r.ClientID, AccountID: r.AccountID, LinkID: r.LinkID, Active: r.Active, Request: r.Request,
		ExpiresAt: store.UTC(r.ExpiresAt), CreatedAt: store.UTC(r.CreatedAt), Successor: r.Successor}
	if r.RotatedAt != nil {
		t.RotatedAt = store.UTC(*r.RotatedAt)
	}
	return t
}

func toTokenRow(t store.TokenSession) tokenRow {
	r := tokenRow{Kind: string(t.Kind), SignatureHash: t.SignatureHash, RequestID: t.RequestID, ClientID: t.ClientID,
		AccountID: t.AccountID, LinkID: t.LinkID, Active: t.Active, Request: t.Request,
		ExpiresAt: store.UTC(t.ExpiresAt), CreatedAt: store.UTC(t.CreatedAt), Successor: t.Successor}
	if !t.RotatedAt.IsZero() {
		at := store.UTC(t.RotatedAt)
		r.RotatedAt = &at
	}
	if r.Request == nil {
		r.Request = []byte{}
	}
	return r
}

// CreateTokenSession stores a token session.
func (s *Store) CreateTokenSession(ctx context.Context, t store.TokenSession) error {
	r := toTokenRow(t)
	return s.create(ctx, &r, rotationColumns...)
}

// GetTokenSession returns a session whether active or not.
func (s *Store) GetTokenSession(ctx context.Context, kind store.TokenKind, sig string) (store.TokenSession, error) {
	var r tokenRow
	if err := s.q(ctx).Take(&r, "kind = ? AND signature_hash = ?", string(kind), sig).Error; err != nil {
		return store.TokenSession{}, translate(err)
	}
	return toToken(r), nil
}

// DeleteTokenSession deletes a session; a missing one answers ErrNotFound.
func (s *Store) DeleteTokenSession(ctx context.Context, kind store.TokenKind, sig string) error {
	res := s.q(ctx).Delete(&tokenRow{}, "kind = ? AND signature_hash = ?", string(kind), sig)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeactivateTokenSession flips active to inactive with one conditional
// UPDATE, so of two concurrent callers exactly one succeeds.
func (s *Store) DeactivateTokenSession(ctx context.Context, kind store.TokenKind, sig string) error {
	res := s.q(ctx).Model(&tokenRow{}).Where("kind = ? AND signature_hash = ? AND active = ?", string(kind), sig, true).Update("active", false)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 1 {
		return nil
	}
	if _, err := s.GetTokenSession(ctx, kind, sig); err != nil {
		return err
	}
	return store.ErrConflict
}

// DeactivateRequest deactivates a grant family.
func (s *Store) DeactivateRequest(ctx context.Context, kind store.TokenKind, requestID string) error {
	q := s.q(ctx).Model(&tokenRow{}).Where("request_id = ? AND active = ?", requestID, true)
	if kind != "" {
		q = q.Where("kind = ?", string(kind))
	}
	return translate(q.Update("active", false).Error)
}

// PurgeTokenSessions deletes sessions that expired before t, found
// through the janitor's index of kind and expiry (token_sessions_kind_expires
// on SQLite, token_sessions_expires_kind on PostgreSQL), which needs the
// kinds named on SQLite.
func (s *Store) PurgeTokenSessions(ctx context.Context, before time.Time) (int64, error) {
	res := s.q(ctx).Delete(&tokenRow{}, "kind IN ? AND expires_at < ?", store.TokenKinds, store.UTC(before))
	return res.RowsAffected, translate(res.Error)
}
