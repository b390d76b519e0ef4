// Package ratelimit limits requests per key — a client address before
// authentication, a link after — in one of two ways:
//
//   - Limiter keeps one token bucket (golang.org/x/time/rate) per key in
//     memory. Buckets idle longer than a minute are swept so that the map
//     stays small. Its limits are the process's own: the single-node
//     (SQLite) deployment uses it.
//   - Shared counts hits in the database (store.RateWindows), so every
//     replica on one PostgreSQL enforces one limit together (docs/reference.md §13):
//     a Limit of PerSecond and Burst becomes at most Burst hits in any
//     sliding window of Burst/PerSecond seconds (whole seconds, at least
//     one), counted with one UPSERT per allowed request. When the database
//     cannot answer, a Shared limiter falls back to its own in-memory bucket
//     for that request (and logs so at most once a minute): a database
//     outage is answered by the tools, not by refusing every caller.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/linkslot/linkslot/internal/store"
)

// Limit is a sustained rate and a burst. A zero Rate means unlimited.
type Limit struct {
	PerSecond float64
	Burst     int
}

// Limiter holds the buckets of one kind of key.
type Limiter struct {
	limit Limit
	clock store.Clock

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns a limiter; a nil clock means the system clock.
func New(l Limit, clock store.Clock) *Limiter {
	if clock == nil {
		clock = store.SystemClock
	}
	if l.Burst <= 0 {
		l.Burst = int(math.Max(1, l.PerSecond))
	}
	return &Limiter{limit: l, clock: clock, buckets: map[string]*bucket{}}
}

// Allower is a per-key limit: *Limiter or *Shared.
type Allower interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
}

var _, _ Allower = (*Limiter)(nil), (*Shared)(nil)

// Allow takes one token for key. When none is left it answers false and how
// long to wait before the next token, rounded up to whole seconds (≥ 1).
func (l *Limiter) Allow(_ context.Context, key string) (ok bool, retryAfter time.Duration) {
	if l == nil || l.limit.PerSecond <= 0 {
		return true, 0
	}
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > time.Minute {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.limit.PerSecond), l.limit.Burst)}
		l.buckets[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		secs := math.Ceil(d.Seconds())
		return false, time.Duration(secs) * time.Second
	}
	return true, 0
}
