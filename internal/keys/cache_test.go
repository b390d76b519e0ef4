package keys_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/keys"
)

// scriptedKeys is a key source whose every SigningKey call is announced on
// calls and answered with what the test sends on replies.
type scriptedKeys struct {
	calls   chan struct{}
	replies chan reply
	n       atomic.Int64
}

type reply struct {
	kid string
	err error
}

func (s *scriptedKeys) SigningKey(context.Context) (jose.SigningKey, error) {
	s.n.Add(1)
	s.calls <- struct{}{}
	r := <-s.replies
	if r.err != nil {
		return jose.SigningKey{}, r.err
	}
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: r.kid}}, nil
}

func (s *scriptedKeys) VerificationKeys(context.Context) (*jose.JSONWebKeySet, error) {
	return &jose.JSONWebKeySet{}, nil
}

// answer waits for the source's next call and answers it; it reports
// whether the call came.
func (s *scriptedKeys) answer(r reply) bool {
	select {
	case <-s.calls:
		s.replies <- r
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// TestCacheSigningKey: the key is read once and then served from memory;
// past the period a background refresh starts, and when that refresh fails
// (seen by the source answering it with an error) the cached key is still
// served and the next call tries the refresh again; a refresh that succeeds
// replaces the key.
func TestCacheSigningKey(t *testing.T) {
	ctx := context.Background()
	src := &scriptedKeys{calls: make(chan struct{}), replies: make(chan reply)}
	clk := &testClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	c := keys.NewSigningCache(src, time.Minute, clk.now)
	kidOf := func() string {
		t.Helper()
		k, err := c.SigningKey(ctx)
		if err != nil {
			t.Fatalf("SigningKey: %v", err)
		}
		return k.Key.(jose.JSONWebKey).KeyID
	}

	// The first call reads the source, and its failure is the caller's.
	go src.answer(reply{err: errors.New("database down")})
	if _, err := c.SigningKey(ctx); err == nil {
		t.Fatal("no key and a failing source, yet no error")
	}
	go src.answer(reply{kid: "k1"})
	if got := kidOf(); got != "k1" {
		t.Fatalf("kid %q", got)
	}
	for range 10 {
		if got := kidOf(); got != "k1" {
			t.Fatalf("kid %q", got)
		}
	}
	if n := src.n.Load(); n != 2 {
		t.Fatalf("%d source reads within the period; want 2 (one failed, one loaded)", n)
	}

	// Past the period: the call answers from memory and starts a refresh,
	// which fails.
	clk.advance(time.Minute)
	if got := kidOf(); got != "k1" {
		t.Fatalf("kid %q", got)
	}
	if !src.answer(reply{err: errors.New("database down")}) {
		t.Fatal("past the period, no refresh read the source")
	}
	// The failed refresh kept k1 and left it stale: calls keep answering
	// k1 and one of them starts the next refresh (the source is read again).
	retried := make(chan struct{})
	go func() {
		if src.answer(reply{kid: "k2"}) {
			close(retried)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for done := false; !done; {
		if got := kidOf(); got != "k1" && got != "k2" {
			t.Fatalf("kid %q", got)
		}
		select {
		case <-retried:
			done = true
		default:
			if time.Now().After(deadline) {
				t.Fatal("a failed refresh was never tried again")
			}
			runtime.Gosched()
		}
	}
	// The successful refresh replaces the key.
	for kidOf() != "k2" {
		if time.Now().After(deadline) {
			t.Fatal("the refreshed key never replaced the cached one")
		}
		runtime.Gosched()
	}
	if n := src.n.Load(); n != 4 {
		t.Fatalf("%d source reads; want 4", n)
	}
}
