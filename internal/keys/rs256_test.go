package keys_test

import (
	"context"
	"crypto/rsa"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestRS256Keys: the token-rs256 purpose holds RSA keys of RSABits,
// encrypted at rest like the others, signing RS256; a Set publishes them
// beside the ES256 token keys, each with its alg and kid; and a token
// rotation names both purposes.
func TestRS256Keys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		es := keys.NewManager(s, secret, store.KeyPurposeToken, clock.now)
		rs := keys.NewManager(s, secret, store.KeyPurposeTokenRS256, clock.now)
		set := keys.Set{es, rs}
		if err := set.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := set.Ensure(ctx); err != nil { // a second start adds nothing
			t.Fatal(err)
		}
		stored, _ := s.ListSigningKeys(ctx, store.KeyPurposeTokenRS256)
		if len(stored) != 1 || stored[0].Algorithm != "RS256" {
			t.Fatalf("stored RS256 keys %+v", stored)
		}
		kid, priv, err := rs.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := priv.(*rsa.PrivateKey); !ok || k.N.BitLen() != keys.RSABits || kid != stored[0].ID {
			t.Fatalf("current RS256 key %T %s", priv, kid)
		}
		if len(stored[0].PrivateEncrypted) == 0 {
			t.Fatal("no sealed private key")
		}
		tok := sign(t, rs, `{"sub":"a"}`)
		jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
		if err != nil {
			t.Fatalf("not an RS256 JWS: %v", err)
		}
		if jws.Signatures[0].Header.KeyID != kid {
			t.Fatalf("kid %q, want %q", jws.Signatures[0].Header.KeyID, kid)
		}

		clock.advance(time.Minute)
		newKid, err := rs.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := set.VerificationKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range pub.Keys {
			if !k.IsPublic() {
				t.Fatal("a private key in the JWKS")
			}
			got = append(got, k.Algorithm+" "+k.KeyID)
		}
		esKid, _, _ := es.Current(ctx)
		if want := []string{"ES256 " + esKid, "RS256 " + newKid, "RS256 " + kid}; !slices.Equal(got, want) {
			t.Fatalf("JWKS %v, want %v", got, want)
		}
		for _, k := range pub.Key(kid) {
			if _, err := jws.Verify(k); err != nil {
				t.Fatalf("the previous RS256 key does not verify its token: %v", err)
			}
		}
		if p, err := rs.PublicKey(ctx, kid); err != nil {
			t.Fatal(err)
		} else if _, ok := p.(*rsa.PublicKey); !ok {
			t.Fatalf("PublicKey is %T", p)
		}
		// The other purpose's secret does not open the key.
		if _, err := keys.NewManager(s, []byte("another secret key, 32 bytes long!"), store.KeyPurposeTokenRS256, nil).SigningKey(ctx); err == nil {
			t.Fatal("an RS256 key opened under another secret")
		}
	})
	if got := keys.Purposes(store.KeyPurposeToken); !slices.Equal(got, []string{store.KeyPurposeToken, store.KeyPurposeTokenRS256}) {
		t.Errorf("Purposes(token) = %v", got)
	}
	if got := keys.Purposes(store.KeyPurposeGrant); !slices.Equal(got, []string{store.KeyPurposeGrant}) {
		t.Errorf("Purposes(grant) = %v", got)
	}
	if keys.Algorithm(store.KeyPurposeGrant) != jose.ES256 || keys.Algorithm(store.KeyPurposeTokenRS256) != jose.RS256 {
		t.Error("Algorithm")
	}
}
