package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// Shared is a limit that every process on one database enforces together.
type Shared struct {
	rw     store.RateWindows
	prefix string
	window int64 // seconds
	limit  int
	clock  store.Clock
	log    *slog.Logger
	local  *Limiter // the answer while the database cannot give one

	mu      sync.Mutex
	lastErr time.Time
}

// SharedOptions configure NewShared. Prefix names the kind of key
// ("rs:addr:", "rs:link:") so that limits of different kinds never mix.
type SharedOptions struct {
	Prefix string
	Clock  store.Clock  // default store.SystemClock
	Logger *slog.Logger // default discard
}

// NewShared returns a database-backed limiter for l (see the package doc
// for how a rate and a burst become a window).
func NewShared(rw store.RateWindows, l Limit, o SharedOptions) *Shared {
	if o.Clock == nil {
		o.Clock = store.SystemClock
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Shared{rw: rw, prefix: o.Prefix, clock: o.Clock, log: o.Logger, local: New(l, o.Clock)}
	s.limit, s.window = Window(l)
	return s
}

// Window is how Shared enforces l: at most limit hits in any window of
// that many whole seconds.
func Window(l Limit) (limit int, window int64) {
	burst := l.Burst
	if burst <= 0 {
		burst = int(math.Max(1, l.PerSecond))
	}
	if l.PerSecond <= 0 {
		return 0, 0
	}
	return burst, int64(math.Max(1, math.Ceil(float64(burst)/l.PerSecond)))
}

// Allow counts one hit for key when the window has room; otherwise it
// answers false and the whole seconds (≥ 1) until it has.
func (s *Shared) Allow(ctx context.Context, key string) (bool, time.Duration) {
	if s == nil || s.limit <= 0 {
		return true, 0
	}
	now := s.clock()
	sec := now.Unix()
	k := s.prefix + key
	ok, err := s.rw.TakeRate(ctx, k, sec, s.window, s.limit)
	if err != nil {
		if ctx.Err() == nil { // not the caller going away
			s.failed(ctx, now, err)
		}
		return s.local.Allow(ctx, key)
	}
	if ok {
		return true, 0
	}
	return false, s.retryAfter(ctx, k, sec)
}

// retryAfter: how many seconds until the hits still in the window drop
// below the limit, counting no new ones.
func (s *Shared) retryAfter(ctx context.Context, key string, now int64) time.Duration {
	secs, err := s.rw.RateWindow(ctx, key, now-s.window)
	if err != nil {
		return time.Second
	}
	for d := int64(1); d < s.window; d++ {
		n := 0
		for _, r := range secs {
			if r.Sec > now+d-s.window {
				n += r.Hits
			}
		}
		if n < s.limit {
			return time.Duration(d) * time.Second
		}
	}
	return time.Duration(s.window) * time.Second
}

func (s *Shared) failed(ctx context.Context, now time.Time, err error) {
	s.mu.Lock()
	if now.Sub(s.lastErr) < time.Minute {
		s.mu.Unlock()
		return
	}
	s.lastErr = now
	s.mu.Unlock()
	s.log.WarnContext(ctx, "shared rate limit unavailable; this process limits on its own meanwhile", "limit", s.prefix, "err", err)
}
