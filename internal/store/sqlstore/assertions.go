package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

type assertionRow struct {
	JTIHash   string `gorm:"column:jti_hash;primaryKey"`
	ExpiresAt time.Time
}

func (assertionRow) TableName() string { return "client_assertions" }

// UseClientAssertion implements store.ClientAssertions: an expired use of
// the same id is cleared and the new one inserted in one transaction; the
// primary key refuses a second use, concurrent ones included. Other
// expired ids are the janitor's (SweepClientAssertions), in bounded
// batches off the token path.
func (s *Store) UseClientAssertion(ctx context.Context, jtiHash string, expires, now time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Delete(&assertionRow{}, "jti_hash = ? AND expires_at <= ?", jtiHash, store.UTC(now)).Error; err != nil {
			return err
		}
		return tx.Create(&assertionRow{JTIHash: jtiHash, ExpiresAt: store.UTC(expires)}).Error
	})
}

// ClientAssertionUsed implements store.ClientAssertions.
func (s *Store) ClientAssertionUsed(ctx context.Context, jtiHash string, now time.Time) (bool, error) {
	var n int64
	err := s.q(ctx).Model(&assertionRow{}).Where("jti_hash = ? AND expires_at > ?", jtiHash, store.UTC(now)).Count(&n).Error
	return n > 0, translate(err)
}
