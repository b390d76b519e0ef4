package sqlstore

import (
	"context"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

var _ store.RateWindows = (*Store)(nil)

// takeRateSQL counts one hit in one statement — an UPSERT on (key, sec) —
// when the window stays within the limit. The row of the current second is
// locked by the conflict, so concurrent hits of one key and second are
// counted one after another and the WHERE sees every earlier one; the
// window's older seconds are no longer written. A refused hit returns no
// row and writes nothing. The same text runs on PostgreSQL and SQLite.
const takeRateSQL = `INSERT INTO rate_windows AS w (key, sec, hits, expires)
SELECT ?, ?, 1, ? WHERE (SELECT COALESCE(SUM(p.hits), 0) FROM rate_windows p WHERE p.key = ? AND p.sec > ? AND p.sec < ?) < ?
ON CONFLICT (key, sec) DO UPDATE SET hits = w.hits + 1
WHERE w.hits + (SELECT COALESCE(SUM(p.hits), 0) FROM rate_windows p WHERE p.key = ? AND p.sec > ? AND p.sec < ?) < ?
RETURNING hits`

// TakeRate implements store.RateWindows.
func (s *Store) TakeRate(ctx context.Context, key string, now, window int64, limit int) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	since := now - window
	var hits []int
	err := s.q(ctx).Raw(takeRateSQL, key, now, now+window, key, since, now, limit, key, since, now, limit).Scan(&hits).Error
	if err != nil {
		return false, translate(err)
	}
	return len(hits) == 1, nil
}

// AddRateHit implements store.RateWindows.
func (s *Store) AddRateHit(ctx context.Context, key string, now, keep int64) error {
	err := s.q(ctx).Exec(`INSERT INTO rate_windows AS w (key, sec, hits, expires) VALUES (?, ?, 1, ?)
ON CONFLICT (key, sec) DO UPDATE SET hits = w.hits + 1, expires = excluded.expires`, key, now, now+keep).Error
	return translate(err)
}

// RateWindow implements store.RateWindows.
func (s *Store) RateWindow(ctx context.Context, key string, since int64) ([]store.RateSecond, error) {
	var out []store.RateSecond
	err := s.q(ctx).Raw(`SELECT sec, hits FROM rate_windows WHERE key = ? AND sec > ? ORDER BY sec`, key, since).Scan(&out).Error
	if err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// DeleteRateHits implements store.RateWindows.
func (s *Store) DeleteRateHits(ctx context.Context, key string) error {
	return translate(s.q(ctx).Exec(`DELETE FROM rate_windows WHERE key = ?`, key).Error)
}

// SweepRateWindows implements store.Sweeps.
func (s *Store) SweepRateWindows(ctx context.Context, before time.Time, _ int) (int64, error) {
	res := s.q(ctx).Exec(`DELETE FROM rate_windows WHERE expires < ?`, before.Unix())
	return res.RowsAffected, translate(res.Error)
}
