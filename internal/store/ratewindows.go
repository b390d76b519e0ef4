package store

import (
	"context"
	"sync"
	"time"
)

// RateWindows counts hits per key and whole second (Unix seconds) in the
// database, so that every replica on it sees the same counts: the shared
// rate limits and sign-in throttle (CONTRACT §13). A row is kept until its
// expiry second; PurgeRateWindows deletes expired rows.
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
	// PurgeRateWindows deletes the rows that expired before now and
	// reports how many.
	PurgeRateWindows(ctx context.Context, now int64) (int64, error)
}

// RateSecond is the number of hits of one key in one second.
type RateSecond struct {
	Sec  int64
	Hits int
}

// RatePurger deletes expired rate windows in the background, at most once
// a minute per process: every user of the table cleans it, so it holds
// live windows only without a separate janitor. The zero value is ready.
type RatePurger struct {
	mu   sync.Mutex
	last time.Time
}

// Maybe starts a purge of rw when the last one began a minute or more
// before now; onErr (may be nil) hears of a failure.
func (p *RatePurger) Maybe(rw RateWindows, now time.Time, onErr func(error)) {
	p.mu.Lock()
	if !p.last.IsZero() && now.Sub(p.last) < time.Minute {
		p.mu.Unlock()
		return
	}
	p.last = now
	p.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := rw.PurgeRateWindows(ctx, now.Unix()); err != nil && onErr != nil {
			onErr(err)
		}
	}()
}
