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
// live windows only without a separate janitor. When the table's store
// also holds leases (sqlstore does), a purge first takes the minute-long
// lease "rate_windows", so that one process of all those sharing the
// database purges each minute rather than every one of them (each purge
// reads the whole table: it has no index on expires, which would cost every
// counted hit an index update). The zero value is ready.
type RatePurger struct {
	mu     sync.Mutex
	last   time.Time
	holder string
}

// RatePurgeLease is the lease name of RatePurger.
const RatePurgeLease = "rate_windows"

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
		if _, _, err := p.Purge(ctx, rw, now); err != nil && onErr != nil {
			onErr(err)
		}
	}()
}

// Purge deletes rw's windows that expired before now unless, rw holding
// leases, another purger has the lease of this minute; it reports whether
// it purged and how many rows it deleted.
func (p *RatePurger) Purge(ctx context.Context, rw RateWindows, now time.Time) (bool, int64, error) {
	if l, ok := rw.(Leases); ok {
		p.mu.Lock()
		if p.holder == "" {
			p.holder = NewID("purge")
		}
		holder := p.holder
		p.mu.Unlock()
		// Taken for a minute and never released: the next purge anywhere
		// is a minute later.
		got, err := l.TryLease(ctx, RatePurgeLease, holder, now, now.Add(time.Minute))
		if err != nil || !got {
			return false, 0, err
		}
	}
	n, err := rw.PurgeRateWindows(ctx, now.Unix())
	return err == nil, n, err
}
