package tools

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

type countingKeys struct {
	calls atomic.Int64
	key   jose.SigningKey
	fail  atomic.Bool
}

func (c *countingKeys) SigningKey(context.Context) (jose.SigningKey, error) {
	c.calls.Add(1)
	if c.fail.Load() {
		return jose.SigningKey{}, errors.New("database down")
	}
	return c.key, nil
}

func (c *countingKeys) VerificationKeys(context.Context) (*jose.JSONWebKeySet, error) {
	return &jose.JSONWebKeySet{}, nil
}

// The signing key is read once, then served from memory even while the
// source fails (the refresh runs in the background).
func TestCacheSigningKey(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	src := &countingKeys{key: jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: "k1"}}}
	c := CacheSigningKey(src, time.Hour)
	for i := 0; i < 10; i++ {
		k, err := c.SigningKey(context.Background())
		if err != nil || keyID(k.Key) != "k1" {
			t.Fatalf("%v %v", k, err)
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("%d source reads; want 1", n)
	}
	src.fail.Store(true)
	stale := CacheSigningKey(src, time.Nanosecond).(*signingKeyCache)
	src.fail.Store(false)
	if _, err := stale.SigningKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.fail.Store(true)
	time.Sleep(time.Millisecond)
	if _, err := stale.SigningKey(context.Background()); err != nil {
		t.Fatalf("a cached key must survive a failing refresh: %v", err)
	}
}

func keyID(k any) string {
	if j, ok := k.(jose.JSONWebKey); ok {
		return j.KeyID
	}
	return ""
}
