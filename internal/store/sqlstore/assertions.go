package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

type assertionRow struct {
	JTIHash   string `gorm:"column:jti_hash;primaryKey"`
	ExpiresAt time.Time
}

func (assertionRow) TableName() string { return "client_assertions" }

// UseClientAssertion implements store.ClientAssertions with one upsert
// (as TryLease): the insert, or the replacement of an expired use of the
// same id; the conflict refuses a second use of an unexpired one,
// concurrent ones included. Other expired ids are the janitor's
// (SweepClientAssertions), in bounded batches off the token path.
func (s *Store) UseClientAssertion(ctx context.Context, jtiHash string, expires, now time.Time) error {
	res := s.q(ctx).Exec(`INSERT INTO client_assertions (jti_hash, expires_at) VALUES (?, ?)
ON CONFLICT (jti_hash) DO UPDATE SET expires_at = excluded.expires_at
WHERE client_assertions.expires_at <= ?`, jtiHash, store.UTC(expires), store.UTC(now))
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrAlreadyExists
	}
	return nil
}
