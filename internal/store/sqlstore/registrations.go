package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

var _ store.ClientRegistrations = (*Store)(nil)

type clientRegistrationRow struct {
	ClientID        string `gorm:"primaryKey"`
	AccessTokenHash string
	Metadata        string
	ClientAddr      string
	CreatedAt       time.Time
}

func (clientRegistrationRow) TableName() string { return "client_registrations" }

// CreateClientRegistration implements store.ClientRegistrations.
func (s *Store) CreateClientRegistration(ctx context.Context, r store.ClientRegistration) error {
	return s.create(ctx, &clientRegistrationRow{ClientID: r.ClientID, AccessTokenHash: r.AccessTokenHash,
		Metadata: string(r.Metadata), ClientAddr: r.ClientAddr, CreatedAt: store.UTC(r.CreatedAt)})
}

// GetClientRegistration implements store.ClientRegistrations.
func (s *Store) GetClientRegistration(ctx context.Context, clientID string) (store.ClientRegistration, error) {
	var r clientRegistrationRow
	if err := s.q(ctx).Take(&r, "client_id = ?", clientID).Error; err != nil {
		return store.ClientRegistration{}, translate(err)
	}
	return store.ClientRegistration{ClientID: r.ClientID, AccessTokenHash: r.AccessTokenHash, Metadata: []byte(r.Metadata),
		ClientAddr: r.ClientAddr, CreatedAt: store.UTC(r.CreatedAt)}, nil
}

// SweepUnusedRegistrations implements store.Sweeps: the oldest
// registrations first, by client_registrations_created, each checked for a
// link through links_client; the client goes and its registration with it
// (ON DELETE CASCADE). A client nobody linked has no token sessions: a
// code is issued only with the approval that creates the link.
func (s *Store) SweepUnusedRegistrations(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.sweep(ctx, `DELETE FROM clients WHERE id IN (
SELECT r.client_id FROM client_registrations r WHERE r.created_at < ?
AND NOT EXISTS (SELECT 1 FROM links l WHERE l.client_id = r.client_id) ORDER BY r.created_at LIMIT ?`+s.skipLocked()+`)`,
		store.UTC(before), limit)
}
