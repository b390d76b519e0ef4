package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// CreateSigningKey stores a key.
func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	r := keyRow{ID: k.ID, Purpose: k.Purpose, Algorithm: k.Algorithm, PrivateEncrypted: k.PrivateEncrypted,
		PublicJWK: k.PublicJWK, CreatedAt: store.UTC(k.CreatedAt), RetiredAt: utcPtr(k.RetiredAt)}
	return s.create(ctx, &r)
}

// ListSigningKeys returns the keys of a purpose, newest first.
func (s *Store) ListSigningKeys(ctx context.Context, purpose string) ([]store.SigningKey, error) {
	var rows []keyRow
	if err := s.q(ctx).Where("purpose = ?", purpose).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.SigningKey, len(rows))
	for i, r := range rows {
		out[i] = store.SigningKey{ID: r.ID, Purpose: r.Purpose, Algorithm: r.Algorithm, PrivateEncrypted: r.PrivateEncrypted,
			PublicJWK: r.PublicJWK, CreatedAt: store.UTC(r.CreatedAt), RetiredAt: utcPtr(r.RetiredAt)}
	}
	return out, nil
}

// RetireSigningKey marks a key retired.
func (s *Store) RetireSigningKey(ctx context.Context, id string, t time.Time) error {
	res := s.q(ctx).Model(&keyRow{}).Where("id = ? AND retired_at IS NULL", id).Update("retired_at", store.UTC(t))
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeleteSigningKey deletes a key.
func (s *Store) DeleteSigningKey(ctx context.Context, id string) error {
	res := s.q(ctx).Delete(&keyRow{}, "id = ?", id)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}
