package tools

import (
	"context"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// KeySource is a grant key source (internal/grant.KeySource, which
// internal/keys.Manager implements), declared here so that the tools need
// not import the grant package: the mutation service owns grants.
type KeySource interface {
	SigningKey(ctx context.Context) (jose.SigningKey, error)
	VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error)
}

// signingKeyCache serves a grant key source's signing key from memory and
// refreshes it in the background. The mutation tools sign a booking's grant
// inside the transaction that changes the booking (the grant is part of the
// stored idempotent answer); a signing key read from the database there would
// need a second pooled connection while the transaction holds one, and under
// a burst (every connection held by a transaction waiting for that key) the
// pool would deadlock. Verification keys are always read through, so a
// rotation is seen at once by Verify and within one refresh period by the
// signer.
type signingKeyCache struct {
	src   KeySource
	every time.Duration

	mu         sync.Mutex
	key        jose.SigningKey
	have       bool
	at         time.Time
	refreshing bool
}

var _ KeySource = (*signingKeyCache)(nil)

// CacheSigningKey wraps src so that SigningKey answers from memory once
// loaded, refreshing at most every period in the background. Call
// SigningKey once at start-up to load it.
func CacheSigningKey(src KeySource, every time.Duration) KeySource {
	if every <= 0 {
		every = time.Minute
	}
	return &signingKeyCache{src: src, every: every}
}

func (c *signingKeyCache) SigningKey(ctx context.Context) (jose.SigningKey, error) {
	c.mu.Lock()
	if c.have {
		k := c.key
		if time.Since(c.at) > c.every && !c.refreshing {
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
	c.key, c.have, c.at = k, true, time.Now()
	c.mu.Unlock()
	return k, nil
}

func (c *signingKeyCache) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := c.src.SigningKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshing = false
	if err == nil {
		c.key, c.at = k, time.Now()
	}
}

func (c *signingKeyCache) VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	return c.src.VerificationKeys(ctx)
}
