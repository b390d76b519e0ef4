package keys_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestPublicKeyCache: PublicKey answers from its cache, but whether a key
// is still published follows the manager's clock at each call (the same
// rule as VerificationKeys), and a key created after the cache was filled
// is found at once.
func TestPublicKeyCache(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		at := t0
		m := keys.NewManager(s, secret, store.KeyPurposeToken, func() time.Time { return at })
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		first, _, err := m.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.PublicKey(ctx, first); err != nil { // fills the cache
			t.Fatal(err)
		}
		// Another manager (another replica) rotates twice: the cache of m
		// has neither new key.
		other := keys.NewManager(s, secret, store.KeyPurposeToken, func() time.Time { return at })
		at = t0.Add(time.Minute)
		if _, err := other.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
		at = t0.Add(2 * time.Minute)
		newest, err := other.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.PublicKey(ctx, newest); err != nil {
			t.Fatalf("key created after the cache was filled: %v", err)
		}
		for _, tc := range []struct {
			at       time.Duration
			verifies bool
		}{
			{time.Minute + keys.RetiredWindow - time.Second, true},
			{time.Minute + keys.RetiredWindow, false},
		} {
			at = t0.Add(tc.at)
			if _, err := m.PublicKey(ctx, first); (err == nil) != tc.verifies {
				t.Errorf("at +%v: first key found = %v, want %v", tc.at, err == nil, tc.verifies)
			}
		}
		if _, err := m.PublicKey(ctx, "nope"); err == nil {
			t.Error("unknown kid found")
		}
	})
}
