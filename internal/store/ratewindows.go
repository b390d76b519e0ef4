package store

import (
	"context"
)

// RateWindows counts hits per key and whole second (Unix seconds) in the
// database, so that every replica on it sees the same counts: the shared
// rate limits and sign-in throttle (docs/reference.md §13). A row is kept until its
// expiry second; the janitor deletes expired rows (Sweeps.SweepRateWindows).
type RateWindows interface {
	// TakeRate counts one hit for key at second now when the hits of the
	// window — the seconds in (now-window, now] — stay within limit, and
	// reports whether it did. Concurrent calls never count more than limit
	// hits in one window. The row expires at now+window.
	TakeRate(ctx context.Context, key string, now, window int64, limit int) (bool, error)
	// AddRateHit counts one hit for key at second now, kept until now+keep.
	AddRateHit(ctx context.Context, key string, now, keep int64) error
	// RateWindow returns key's hits per second after since, oldest first.
	RateWindow(ctx context.Context, key string, since int64) ([]RateSecond, error)
	// DeleteRateHits forgets every hit of key.
	DeleteRateHits(ctx context.Context, key string) error
}

// RateSecond is the number of hits of one key in one second.
type RateSecond struct {
	Sec  int64
	Hits int
}
