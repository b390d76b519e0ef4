package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// newProvider is the provider on a fresh SQLite store with a token key of
// each algorithm.
func newProvider(t testing.TB) (*provider.Provider, *keys.Manager) {
	t.Helper()
	s := sqltest.SQLite(t)
	secret := []byte("0123456789abcdef0123456789abcdef")
	km := keys.NewManager(s, secret, store.KeyPurposeToken, nil)
	rs := keys.NewManager(s, secret, store.KeyPurposeTokenRS256, nil)
	if err := (keys.Set{km, rs}).Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := provider.New(fositestore.New(s, fositestore.Options{}), km,
		provider.Config{Issuer: "https://as.example", Secret: secret, RefreshIdle: 48 * time.Hour, RS256Keys: rs})
	if err != nil {
		t.Fatal(err)
	}
	return p, km
}

func TestProvider(t *testing.T) {
	ctx := context.Background()
	p, km := newProvider(t)
	c := p.Config
	checks := []struct {
		name string
		ok   bool
	}{
		{"PKCE enforced for every client", c.EnforcePKCE},
		{"plain PKCE refused", !c.EnablePKCEPlainChallengeMethod},
		{"access tokens 15 min", c.AccessTokenLifespan == 15*time.Minute},
		{"codes 60 s", c.AuthorizeCodeLifespan == 60*time.Second},
		{"refresh idle configurable", c.RefreshTokenLifespan == 48*time.Hour},
		{"refresh without offline_access", c.RefreshTokenScopes != nil && len(c.RefreshTokenScopes) == 0},
		{"scope as a string", c.JWTScopeClaimKey == jwt.JWTScopeFieldString},
		{"issuer", c.AccessTokenIssuer == "https://as.example" && c.IDTokenIssuer == "https://as.example"},
		{"no debug to clients", !c.SendDebugMessagesToClients},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: not so", ch.name)
		}
	}

	// The signer verifies tokens of the previous key after a rotation.
	tok, _, err := p.Signer.Generate(ctx, jwt.MapClaims{"sub": "a", "exp": time.Now().Add(time.Minute).Unix()}, &jwt.Headers{Extra: map[string]any{"typ": "at+jwt"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Signer.Validate(ctx, tok); err != nil {
		t.Fatalf("token of the previous key: %v", err)
	}
	if _, err := p.Signer.Validate(ctx, tok[:len(tok)-4]+"AAAA"); err == nil {
		t.Fatal("tampered token validated")
	}
}

// TestGenerateMatchesFosite holds Signer.Generate to what fosite's
// DefaultSigner makes through go-jose for the same claims: the same header
// and payload once decoded, and a signature the verifier accepts; for the
// access-token signer and both ID-token signers.
func TestGenerateMatchesFosite(t *testing.T) {
	ctx := context.Background()
	p, _ := newProvider(t)
	now := time.Now().Truncate(time.Second)
	access := (&jwt.JWTClaims{Subject: "acct-1", Issuer: "https://as.example", Audience: []string{"https://rs.example/mcp"},
		JTI: "jti-1", IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute), Scope: []string{"openid", "bookings:read"},
		ScopeField: jwt.JWTScopeFieldString,
		Extra:      map[string]any{"client_id": "https://app.example/client.json?a=1&b=<2>", "link_id": "link-1"}}).ToMapClaims()
	id := (&jwt.IDTokenClaims{Subject: "acct-1", Issuer: "https://as.example", Audience: []string{"demo-mcp-client"},
		JTI: "jti-2", IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute), AuthTime: now.Add(-time.Hour), RequestedAt: now,
		Nonce: "n-0S6_WzA2Mj", AccessTokenHash: "77QmUPtjPfzWtF2AnpK9RQ",
		Extra: map[string]any{"email": "ana+test@example.com", "nested": map[string]any{"n": 1.5, "list": []any{"x", 2}}}}).ToMap()
	for _, c := range []struct {
		name   string
		signer *provider.Signer
		claims jwt.MapClaims
		header jwt.Mapper
		sigLen int // characters of the signature segment
	}{
		// ES256: 64 bytes, R || S (RFC 7518 §3.4); RS256: the modulus size.
		{"access token", p.Signer, access, &jwt.Headers{Extra: map[string]any{"typ": "at+jwt"}}, 86},
		{"ES256 ID token", p.IDSigners[provider.AlgES256], jwt.MapClaims(id), &jwt.Headers{}, 86},
		{"RS256 ID token", p.IDSigners[provider.AlgRS256], jwt.MapClaims(id), &jwt.Headers{}, base64.RawURLEncoding.EncodedLen(keys.RSABits / 8)},
	} {
		ours, oursSig, err := c.signer.Generate(ctx, c.claims, c.header)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		theirs, _, err := c.signer.DefaultSigner.Generate(ctx, c.claims, c.header)
		if err != nil {
			t.Fatalf("%s: fosite: %v", c.name, err)
		}
		o, f := strings.Split(ours, "."), strings.Split(theirs, ".")
		if len(o) != 3 || len(f) != 3 {
			t.Fatalf("%s: not compact JWS: %q", c.name, ours)
		}
		if oursSig != o[2] {
			t.Errorf("%s: signature %q is not the token's third segment", c.name, oursSig)
		}
		for i, part := range []string{"header", "payload"} {
			if got, want := decodeSegment(t, o[i]), decodeSegment(t, f[i]); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s\n ours   %v\n fosite %v", c.name, part, got, want)
			}
		}
		// The payload is what encoding/json writes for the claims, byte
		// for byte (Generate encodes them with segmentio/encoding/json).
		want, err := json.Marshal(map[string]any(c.claims))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := base64.RawURLEncoding.DecodeString(o[1]); !bytes.Equal(got, want) {
			t.Errorf("%s: payload\n got  %s\n want %s (encoding/json)", c.name, got, want)
		}
		if len(o[2]) != c.sigLen {
			t.Errorf("%s: signature segment %d characters, want %d", c.name, len(o[2]), c.sigLen)
		}
		if _, err := c.signer.Validate(ctx, ours); err != nil {
			t.Errorf("%s: our token does not verify: %v", c.name, err)
		}
		if _, err := c.signer.Validate(ctx, theirs); err != nil {
			t.Errorf("%s: fosite's token does not verify: %v", c.name, err)
		}
	}
	// An RS256 ID token is not an access token: the access-token signer
	// verifies ES256 only.
	rs, _, err := p.IDSigners[provider.AlgRS256].Generate(ctx, jwt.MapClaims(id), &jwt.Headers{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Signer.Validate(ctx, rs); err == nil {
		t.Error("the access-token signer accepted an RS256 token")
	}
}

func decodeSegment(t *testing.T, seg string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("segment %s: %v", raw, err)
	}
	return m
}
