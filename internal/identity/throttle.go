package identity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// ThrottlePolicy bounds failed sign-ins. Zero fields take the defaults.
type ThrottlePolicy struct {
	// Window is how long a failure counts (sliding). Default 15 minutes.
	Window time.Duration
	// AccountLimit is the number of failures per account and client
	// address within Window before attempts for that account from that
	// address wait. Default 5. Failures from other addresses never count
	// here, so they cannot make the owner's own address wait.
	AccountLimit int
	// AddressLimit is the number of failures per client address, for any
	// account, within Window before attempts from it wait. Default 30.
	AddressLimit int
	// AccountCeiling bounds guessing at one account from many addresses:
	// once the account has this many failures within Window, from all
	// addresses together, an address with any failure for the account
	// waits (as if AccountLimit were 1), while an address with none is
	// still admitted. Default 100.
	AccountCeiling int
	// BaseDelay is the first wait once a limit is reached; each further
	// failure doubles it, up to Window. Default 1 minute.
	BaseDelay time.Duration
}

func (p ThrottlePolicy) withDefaults() ThrottlePolicy {
	if p.Window <= 0 {
		p.Window = 15 * time.Minute
	}
	if p.AccountLimit <= 0 {
		p.AccountLimit = 5
	}
	if p.AddressLimit <= 0 {
		p.AddressLimit = 30
	}
	if p.AccountCeiling <= 0 {
		p.AccountCeiling = 100
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Minute
	}
	return p
}

// throttle counts failures per key: in memory, or — with rw set — in the
// database's rate windows (store.RateWindows, one row per key and second),
// so that every replica on one PostgreSQL counts the same failures. In
// memory it is per process, for the single-node deployment.
type throttle struct {
	policy ThrottlePolicy
	rw     store.RateWindows // nil: in memory

	mu        sync.Mutex
	failures  map[string][]time.Time // oldest first, within Window
	lastSweep time.Time
}

func newThrottle(p ThrottlePolicy, rw store.RateWindows) *throttle {
	return &throttle{policy: p.withDefaults(), rw: rw, failures: map[string][]time.Time{}}
}

// sharedPrefix keeps the throttle's keys apart from other rate windows.
const sharedPrefix = "signin:"

// retryAt returns when key may be tried again (zero: now).
func (t *throttle) retryAt(ctx context.Context, key string, limit int, now time.Time) (time.Time, error) {
	n, last, err := t.count(ctx, key, now)
	if err != nil || n == 0 {
		return time.Time{}, err
	}
	return t.waitUntil(n, limit, last, now), nil
}

// count returns the failures of key within the window and when the last
// was.
func (t *throttle) count(ctx context.Context, key string, now time.Time) (int, time.Time, error) {
	if t.rw != nil {
		secs, err := t.rw.RateWindow(ctx, sharedPrefix+key, now.Unix()-int64(t.policy.Window/time.Second))
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("identity: read sign-in failures: %w", err)
		}
		n := 0
		for _, s := range secs {
			n += s.Hits
		}
		if len(secs) == 0 {
			return 0, time.Time{}, nil
		}
		return n, time.Unix(secs[len(secs)-1].Sec, 0), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.prune(key, now)
	if len(f) == 0 {
		return 0, time.Time{}, nil
	}
	return len(f), f[len(f)-1], nil
}

// waitUntil: with n failures in the window, the last at last, the next
// attempt waits BaseDelay doubled for each failure past the limit, up to
// Window.
func (t *throttle) waitUntil(n, limit int, last, now time.Time) time.Time {
	if n < limit {
		return time.Time{}
	}
	delay := t.policy.BaseDelay << min(n-limit, 20)
	if delay > t.policy.Window || delay <= 0 {
		delay = t.policy.Window
	}
	at := last.Add(delay)
	if !at.After(now) {
		return time.Time{}
	}
	return at
}

func (t *throttle) fail(ctx context.Context, key string, now time.Time) error {
	if t.rw != nil {
		if err := t.rw.AddRateHit(ctx, sharedPrefix+key, now.Unix(), int64(t.policy.Window/time.Second)); err != nil {
			return fmt.Errorf("identity: count a failed sign-in: %w", err)
		}
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures[key] = append(t.prune(key, now), now)
	t.sweep(now)
	return nil
}

func (t *throttle) reset(ctx context.Context, key string) error {
	if t.rw != nil {
		return t.rw.DeleteRateHits(ctx, sharedPrefix+key)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
	return nil
}

// prune drops failures older than the window; the caller holds mu.
func (t *throttle) prune(key string, now time.Time) []time.Time {
	f := t.failures[key]
	cut := now.Add(-t.policy.Window)
	i := 0
	for i < len(f) && !f[i].After(cut) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.failures, key)
		return nil
	}
	t.failures[key] = f
	return f
}

// sweep forgets keys with no recent failure, at most once per window, so
// memory stays bounded by the failures of one window.
func (t *throttle) sweep(now time.Time) {
	if now.Sub(t.lastSweep) < t.policy.Window {
		return
	}
	t.lastSweep = now
	for k := range t.failures {
		t.prune(k, now)
	}
}
