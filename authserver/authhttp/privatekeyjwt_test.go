package authhttp_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/store"
)

const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// keyPair is a client's signing key and its published JWKS.
type keyPair struct {
	priv crypto.Signer
	alg  jose.SignatureAlgorithm
	kid  string
}

func newES256(t *testing.T, kid string) keyPair {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{priv: k, alg: jose.ES256, kid: kid}
}

func newRS256(t *testing.T, kid string) keyPair {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{priv: k, alg: jose.RS256, kid: kid}
}

func (k keyPair) jwks() string {
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}}})
	return string(b)
}

// assertion is an RFC 7523 client assertion for clientID, signed by k.
func (k keyPair) assertion(t *testing.T, clientID, aud string, exp time.Duration) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: clientID, Subject: clientID, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(exp)), ID: store.RandomString(16)}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func assertionForm(a string, kv ...string) url.Values {
	v := url.Values{"client_assertion_type": {assertionType}, "client_assertion": {a}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// pkjCode runs the front channel for clientID and returns a code and its
// verifier.
func (e *cimdEnv) pkjCode(clientID string) (string, string) {
	e.t.Helper()
	c := e.oauth(clientID, "", "openid", "offline_access")
	v := oauth2.GenerateVerifier()
	return e.code(c, e.account.ID, oauth2.S256ChallengeOption(v)), v
}

func wantInvalidClient(t *testing.T, what string, st int, m map[string]any) {
	t.Helper()
	if st != http.StatusUnauthorized && st != http.StatusBadRequest || m["error"] != "invalid_client" {
		t.Fatalf("%s: %d %v, want invalid_client", what, st, m)
	}
}

// A URL client whose document asks for private_key_jwt (ChatGPT's shape:
// jwks_uri) completes the code flow and refreshes with client assertions,
// and is refused on a replayed jti, a wrong key, a missing assertion, an
// exp too far ahead and a wrong audience.
func TestPrivateKeyJWTURLClient(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	key := newES256(t, "chatgpt-1")
	jwksURL := e.host.Put("/oauth/jwks.json", http.StatusOK, key.jwks(), "Cache-Control", "max-age=600")
	id := e.publish("/oauth/client.json", map[string]any{"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": jwksURL})
	e.register(id, func(c *store.Client) { c.Public = false })
	tokenURL := e.issuer + "/oauth2/token"

	code, verifier := e.pkjCode(id)
	a := key.assertion(t, id, tokenURL, 2*time.Minute)
	st, m, _ := e.tokenForm("/oauth2/token", assertionForm(a, "grant_type", "authorization_code", "code", code,
		"code_verifier", verifier, "redirect_uri", e.redirect, "client_id", id))
	if st != http.StatusOK || m["access_token"] == nil || m["refresh_token"] == nil {
		t.Fatalf("code exchange: %d %v", st, m)
	}
	refresh := m["refresh_token"].(string)

	// The same assertion again (a replayed jti): refused.
	st, m, _ = e.tokenForm("/oauth2/token", assertionForm(a, "grant_type", "refresh_token", "refresh_token", refresh))
	wantInvalidClient(t, "replayed jti", st, m)

	// Refresh with a fresh assertion whose aud is the issuer.
	st, m, _ = e.tokenForm("/oauth2/token", assertionForm(key.assertion(t, id, e.issuer, time.Minute), "grant_type", "refresh_token", "refresh_token", refresh))
	if st != http.StatusOK || m["refresh_token"] == refresh {
		t.Fatalf("refresh: %d %v", st, m)
	}
	refresh, access := m["refresh_token"].(string), m["access_token"].(string)

	// Refusals.
	other := newES256(t, "chatgpt-1") // same kid, another key
	for _, c := range []struct {
		name string
		form url.Values
	}{
		{"wrong key", assertionForm(other.assertion(t, id, tokenURL, time.Minute), "grant_type", "refresh_token", "refresh_token", refresh)},
		{"missing assertion", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {id}}},
		{"exp too far ahead", assertionForm(key.assertion(t, id, tokenURL, 10*time.Minute), "grant_type", "refresh_token", "refresh_token", refresh)},
		{"expired", assertionForm(key.assertion(t, id, tokenURL, -time.Minute), "grant_type", "refresh_token", "refresh_token", refresh)},
		{"wrong audience", assertionForm(key.assertion(t, id, "https://elsewhere.example/token", time.Minute), "grant_type", "refresh_token", "refresh_token", refresh)},
		{"another client's id", assertionForm(key.assertion(t, publicID, tokenURL, time.Minute), "grant_type", "refresh_token", "refresh_token", refresh)},
		{"HS256", assertionForm(hs256(t, id, tokenURL), "grant_type", "refresh_token", "refresh_token", refresh)},
	} {
		st, m, _ := e.tokenForm("/oauth2/token", c.form)
		wantInvalidClient(t, c.name, st, m)
	}
	// None of the refusals used up the refresh token.
	st, m, _ = e.tokenForm("/oauth2/token", assertionForm(key.assertion(t, id, tokenURL, time.Minute), "grant_type", "refresh_token", "refresh_token", refresh))
	if st != http.StatusOK {
		t.Fatalf("refresh after refusals: %d %v", st, m)
	}
	access = m["access_token"].(string)

	// Introspection and revocation authenticate the same way.
	st, m, _ = e.tokenForm("/oauth2/introspect", assertionForm(key.assertion(t, id, tokenURL, time.Minute), "token", access, "client_id", id))
	if st != http.StatusOK || m["active"] != true || m["client_id"] != id {
		t.Fatalf("introspect: %d %v", st, m)
	}
	st, m, _ = e.tokenForm("/oauth2/introspect", url.Values{"token": {access}, "client_id": {id}})
	if st != http.StatusUnauthorized || m["active"] == true {
		t.Fatalf("introspect without assertion: %d %v", st, m)
	}
	st, m, _ = e.tokenForm("/oauth2/revoke", assertionForm(key.assertion(t, id, tokenURL, time.Minute), "token", access, "client_id", id))
	if st != http.StatusOK {
		t.Fatalf("revoke: %d %v", st, m)
	}
	st, m, _ = e.tokenForm("/oauth2/revoke", url.Values{"token": {access}, "client_id": {id}})
	wantInvalidClient(t, "revoke without assertion", st, m)

	if n := e.host.Hits("/oauth/jwks.json"); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1 (cached by Cache-Control)", n)
	}
	if e.fetches("jwks", "ok") != 1 || e.fetches("jwks", "cached") == 0 {
		t.Fatalf("jwks metrics: ok %v cached %v", e.fetches("jwks", "ok"), e.fetches("jwks", "cached"))
	}
}

// A jti used at one replica is refused at another sharing the database.
func TestPrivateKeyJWTSingleUseAcrossReplicas(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	key := newES256(t, "k1")
	id := e.publish("/replica-client.json", map[string]any{"token_endpoint_auth_method": "private_key_jwt",
		"jwks": json.RawMessage(key.jwks())})
	e.register(id, func(c *store.Client) { c.Public = false })
	second, err := authhttp.New(context.Background(), e.deps)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(second)
	defer srv2.Close()

	code, verifier := e.pkjCode(id)
	a := key.assertion(t, id, e.issuer+"/oauth2/token", time.Minute)
	st, m, _ := e.tokenForm("/oauth2/token", assertionForm(a, "grant_type", "authorization_code", "code", code,
		"code_verifier", verifier, "redirect_uri", e.redirect))
	if st != http.StatusOK {
		t.Fatalf("first replica: %d %v", st, m)
	}
	resp, err := http.PostForm(srv2.URL+"/oauth2/token", assertionForm(a, "grant_type", "refresh_token", "refresh_token", m["refresh_token"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	var m2 map[string]any
	json.NewDecoder(resp.Body).Decode(&m2)
	resp.Body.Close()
	wantInvalidClient(t, "jti replayed at the second replica", resp.StatusCode, m2)
}

// A registered client given a jwks_uri (RS256 key) authenticates with
// private_key_jwt instead of a secret.
func TestPrivateKeyJWTRegisteredClient(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	key := newRS256(t, "rsa-1")
	jwksURL := e.host.Put("/registered/jwks.json", http.StatusOK, key.jwks())
	now := store.SystemClock()
	if err := e.s.CreateClient(context.Background(), store.Client{ID: "jwt-agent", Name: "JWT agent",
		RedirectURIs: []string{"http://127.0.0.1/callback"}, AllowedScopes: []string{"openid", "offline_access", "bookings:read"},
		DefaultScopes: []string{"bookings:read"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		JWKSURI: jwksURL, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	code, verifier := e.pkjCode("jwt-agent")
	st, m, _ := e.tokenForm("/oauth2/token", assertionForm(key.assertion(t, "jwt-agent", e.issuer+"/oauth2/token", time.Minute),
		"grant_type", "authorization_code", "code", code, "code_verifier", verifier, "redirect_uri", e.redirect))
	if st != http.StatusOK || m["access_token"] == nil {
		t.Fatalf("code exchange: %d %v", st, m)
	}
	st, m, _ = e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)},
		"client_id": {"jwt-agent"}, "client_secret": {"guess"}})
	wantInvalidClient(t, "a secret instead of an assertion", st, m)
}

// hs256 is an assertion signed with a shared secret (client_secret_jwt),
// which Linkslot does not accept.
func hs256(t *testing.T, id, aud string) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(strings.Repeat("k", 32))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: id, Subject: id, Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Minute)), ID: "hs"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
