package keys

import (
	"context"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/store"
)

// Source is what a SigningCache reads: a *Manager.
type Source interface {
	SigningKey(ctx context.Context) (jose.SigningKey, error)
	VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error)
}

var _ Source = (*Manager)(nil)

// SigningCache serves a source's signing key from memory and refreshes it
// in the background, so that no caller ever waits on the database for it.
// The resource server signs a booking's grant inside the transaction that
// changes the booking (the grant is part of the stored idempotent answer);
// a signing key read from the database there would need a second pooled
// connection while the transaction holds one, and under a burst (every
// connection held by a transaction waiting for that key) the pool would
// deadlock. A refresh that fails keeps the cached key and is tried again on
// the next call. Verification keys are always read through, so a rotation
// is seen at once by verifiers and within one refresh period by the signer.
type SigningCache struct {
	src   Source
	every time.Duration
	clock store.Clock

	mu         sync.Mutex
	key        jose.SigningKey
	have       bool
	at         time.Time
	refreshing bool
}

var _ Source = (*SigningCache)(nil)

// NewSigningCache wraps src; the cached key is refreshed at most every
// period (default one minute) on clock (default the system clock). Call
// SigningKey once at start-up to load it.
func NewSigningCache(src Source, every time.Duration, clock store.Clock) *SigningCache {
	if every <= 0 {
		every = time.Minute
	}
	if clock == nil {
		clock = store.SystemClock
	}
	return &SigningCache{src: src, every: every, clock: clock}
}

// SigningKey answers from memory once the key is loaded, starting a
// background refresh when it is older than the period; the first call
// reads the source.
func (c *SigningCache) SigningKey(ctx context.Context) (jose.SigningKey, error) {
	c.mu.Lock()
	if c.have {
		k := c.key
		if now := c.clock(); (now.Sub(c.at) >= c.every || now.Before(c.at)) && !c.refreshing {
			c.refreshing = true
			go c.refresh()
		}
		c.mu.Unlock()
		return k, nil
	}
	c.mu.Unlock()
	k, err := c.src.SigningKey(ctx)
	if err != nil {
		return k, err
	}
	c.mu.Lock()
	c.key, c.have, c.at = k, true, c.clock()
	c.mu.Unlock()
	return k, nil
}

func (c *SigningCache) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := c.src.SigningKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshing = false
	if err == nil {
		c.key, c.at = k, c.clock()
	}
}

// VerificationKeys reads through to the source.
func (c *SigningCache) VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	return c.src.VerificationKeys(ctx)
}
