package keys_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func clockAt(t time.Time) store.Clock {
	return func() time.Time { return t }
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func sign(t *testing.T, m *keys.Manager, payload string) string {
	t.Helper()
	sk, err := m.SigningKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func verify(t *testing.T, m *keys.Manager, token string) error {
	t.Helper()
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return err
	}
	set, err := m.VerificationKeys(context.Background())
	if err != nil {
		return err
	}
	for _, k := range set.Key(jws.Signatures[0].Header.KeyID) {
		if _, err := jws.Verify(k); err == nil {
			return nil
		}
	}
	return errors.New("no key verifies")
}

func TestKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		clk := &testClock{t: now}
		m := keys.NewManager(s, secret, store.KeyPurposeToken, clk.now)

		t.Run("no key before Ensure", func(t *testing.T) {
			if _, err := m.SigningKey(ctx); !errors.Is(err, keys.ErrNoKey) {
				t.Fatalf("got %v, want ErrNoKey", err)
			}
		})
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Ensure(ctx); err != nil { // idempotent
			t.Fatal(err)
		}
		ks, _ := s.ListSigningKeys(ctx, store.KeyPurposeToken)
		if len(ks) != 1 {
			t.Fatalf("Ensure twice: %d keys", len(ks))
		}

		t.Run("encrypted at rest and round-trips", func(t *testing.T) {
			k := ks[0]
			if len(k.PrivateEncrypted) < 40 {
				t.Fatalf("ciphertext too short: %d", len(k.PrivateEncrypted))
			}
			// Another manager with the same secret opens it.
			m2 := keys.NewManager(s, secret, store.KeyPurposeToken, clockAt(now))
			tok := sign(t, m2, `{"a":1}`)
			if err := verify(t, m, tok); err != nil {
				t.Fatal(err)
			}
			sk, _ := m2.SigningKey(ctx)
			if sk.Key.(jose.JSONWebKey).KeyID != k.ID {
				t.Fatalf("kid %q, want %q", sk.Key.(jose.JSONWebKey).KeyID, k.ID)
			}
		})

		t.Run("wrong secret refused", func(t *testing.T) {
			bad := keys.NewManager(s, []byte("another-secret-another-secret-xx"), store.KeyPurposeToken, clockAt(now))
			if _, err := bad.SigningKey(ctx); !errors.Is(err, keys.ErrDecrypt) {
				t.Fatalf("got %v, want ErrDecrypt", err)
			}
		})

		t.Run("tampered ciphertext refused", func(t *testing.T) {
			k := ks[0]
			enc := append([]byte(nil), k.PrivateEncrypted...)
			enc[len(enc)-1] ^= 1
			tk := store.SigningKey{ID: "tampered", Purpose: "tamper", Algorithm: "ES256", PrivateEncrypted: enc,
				PublicJWK: k.PublicJWK, CreatedAt: now}
			if err := s.CreateSigningKey(ctx, tk); err != nil {
				t.Fatal(err)
			}
			tm := keys.NewManager(s, secret, "tamper", clockAt(now))
			if _, err := tm.SigningKey(ctx); !errors.Is(err, keys.ErrDecrypt) {
				t.Fatalf("got %v, want ErrDecrypt", err)
			}
			// The original ciphertext moved to another kid is refused too
			// (the kid is authenticated data).
			moved := store.SigningKey{ID: "moved", Purpose: store.KeyPurposeGrant, Algorithm: "ES256",
				PrivateEncrypted: k.PrivateEncrypted, PublicJWK: k.PublicJWK, CreatedAt: now}
			if err := s.CreateSigningKey(ctx, moved); err != nil {
				t.Fatal(err)
			}
			gm := keys.NewManager(s, secret, store.KeyPurposeGrant, clockAt(now))
			if _, err := gm.SigningKey(ctx); !errors.Is(err, keys.ErrDecrypt) {
				t.Fatalf("moved: got %v, want ErrDecrypt", err)
			}
		})

		t.Run("rotation keeps old tokens verifying", func(t *testing.T) {
			old := sign(t, m, `{"n":"old"}`)
			oldKid := ks[0].ID
			// pm only verifies: it caches the old key's public half now.
			pclk := &testClock{t: now}
			pm := keys.NewManager(s, secret, store.KeyPurposeToken, pclk.now)
			if _, err := pm.PublicKey(ctx, oldKid); err != nil {
				t.Fatal(err)
			}
			later := keys.NewManager(s, secret, store.KeyPurposeToken, clockAt(now.Add(time.Hour)))
			kid, err := later.Rotate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// m (another process) keeps its cached key within its refresh
			// window and picks up the rotation after it, on its own clock:
			// no wall-clock time passes in this test.
			sk, _ := m.SigningKey(ctx)
			if got := sk.Key.(jose.JSONWebKey).KeyID; got != oldKid {
				t.Fatalf("within the refresh window: current kid %q, want the cached %q", got, oldKid)
			}
			clk.advance(1100 * time.Millisecond)
			sk, _ = m.SigningKey(ctx)
			if got := sk.Key.(jose.JSONWebKey).KeyID; got != kid {
				t.Fatalf("after the refresh window: current kid %q, want %q", got, kid)
			}
			if err := verify(t, m, old); err != nil {
				t.Fatalf("old token after rotation: %v", err)
			}
			if err := verify(t, m, sign(t, m, `{"n":"new"}`)); err != nil {
				t.Fatal(err)
			}
			set, _ := m.VerificationKeys(ctx)
			if len(set.Keys) != 2 {
				t.Fatalf("published %d keys, want 2", len(set.Keys))
			}
			// A second rotation, an hour after the first, drops the oldest
			// from the JWKS: it was retired more than RetiredWindow ago.
			third := keys.NewManager(s, secret, store.KeyPurposeToken, clockAt(now.Add(2*time.Hour)))
			if _, err := third.Rotate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := verify(t, third, old); err == nil {
				t.Fatal("token of a key two rotations and an hour old still verifies")
			}
			// pm cached the old key before any rotation and answers from
			// that cache within its refresh window, on its own clock; once
			// the clock moves past the window it reads the list again and
			// finds the key retired more than RetiredWindow ago.
			if _, err := pm.PublicKey(ctx, oldKid); err != nil {
				t.Fatalf("within pm's refresh window: %v", err)
			}
			pclk.advance(2*time.Hour + time.Second)
			if _, err := pm.PublicKey(ctx, oldKid); err == nil {
				t.Fatal("pm still serves a key retired more than RetiredWindow ago")
			}
			js, err := m.PublicJWKS(ctx)
			if err != nil || len(js) == 0 {
				t.Fatal(err)
			}
			for _, k := range set.Keys {
				if !k.IsPublic() {
					t.Fatal("JWKS publishes a private key")
				}
			}
		})
	})
}

// TestTwoQuickRotations: a key retired less than RetiredWindow ago stays
// published even when it is no longer the previous key, so two rotations
// within an access token's lifetime do not break live tokens; once the
// window has passed it is gone.
func TestTwoQuickRotations(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		var at time.Time
		clock := func() time.Time { return at }
		set := func(d time.Duration) { at = t0.Add(d) }
		set(0)
		m := keys.NewManager(s, secret, store.KeyPurposeToken, clock)
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		first := sign(t, m, `{"n":"first"}`)
		set(time.Minute)
		if _, err := m.Rotate(ctx); err != nil { // retires the first key at +1m
			t.Fatal(err)
		}
		set(2 * time.Minute)
		if _, err := m.Rotate(ctx); err != nil { // retires the second at +2m
			t.Fatal(err)
		}
		for _, tc := range []struct {
			at        time.Duration
			published int
			verifies  bool
		}{
			{3 * time.Minute, 3, true},
			{time.Minute + keys.RetiredWindow - time.Second, 3, true},
			{time.Minute + keys.RetiredWindow, 2, false},
			{time.Hour, 2, false},
		} {
			set(tc.at)
			ks, err := m.VerificationKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ks.Keys) != tc.published {
				t.Errorf("at +%v: %d keys published, want %d", tc.at, len(ks.Keys), tc.published)
			}
			if err := verify(t, m, first); (err == nil) != tc.verifies {
				t.Errorf("at +%v: first key's token verifies = %v, want %v", tc.at, err == nil, tc.verifies)
			}
		}
	})
}
