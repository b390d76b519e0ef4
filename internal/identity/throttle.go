package identity

import (
	"sync"
	"time"
)

// ThrottlePolicy bounds failed sign-ins. Zero fields take the defaults.
type ThrottlePolicy struct {
	// Window is how long a failure counts (sliding). Default 15 minutes.
	Window time.Duration
	// AccountLimit is the number of failures per account within Window
	// before attempts wait. Default 5.
	AccountLimit int
	// AddressLimit is the same per client address. Default 30.
	AddressLimit int
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
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Minute
	}
	return p
}

// throttle counts failures per key in memory. It is per process: with
// several replicas each counts on its own, which multiplies the limits by
// the replica count but never locks anyone out.
type throttle struct {
	policy ThrottlePolicy

	mu        sync.Mutex
	failures  map[string][]time.Time // oldest first, within Window
	lastSweep time.Time
}

func newThrottle(p ThrottlePolicy) *throttle {
	return &throttle{policy: p.withDefaults(), failures: map[string][]time.Time{}}
}

// retryAt returns when key may be tried again (zero: now).
func (t *throttle) retryAt(key string, limit int, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.prune(key, now)
	if len(f) < limit {
		return time.Time{}
	}
	delay := t.policy.BaseDelay << min(len(f)-limit, 20)
	if delay > t.policy.Window || delay <= 0 {
		delay = t.policy.Window
	}
	at := f[len(f)-1].Add(delay)
	if !at.After(now) {
		return time.Time{}
	}
	return at
}

func (t *throttle) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures[key] = append(t.prune(key, now), now)
	t.sweep(now)
}

func (t *throttle) reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, key)
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
