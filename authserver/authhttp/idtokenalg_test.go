package authhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const testSecretKey = "test-secret-key-test-secret-key-0123"

// addRP registers a public relying party whose ID tokens are signed with
// alg ("" for the server's default), on the harness's loopback callback.
func (e *env) addRP(id, alg string) {
	e.t.Helper()
	now := store.SystemClock()
	c := store.Client{ID: id, Name: "Relying party " + id, Public: true, RedirectURIs: []string{"http://127.0.0.1/callback"},
		AllowedScopes: []string{"openid", "email"}, DefaultScopes: []string{"email"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, IDTokenSignedResponseAlg: alg, CreatedAt: now, UpdatedAt: now}
	if err := e.s.CreateClient(context.Background(), c); err != nil {
		e.t.Fatal(err)
	}
}

// signIn runs the code flow for client id with golang.org/x/oauth2 and
// returns the token (with its ID token).
func (e *env) signIn(id string) (*oauth2.Config, *oauth2.Token) {
	e.t.Helper()
	c := e.oauth(id, "", "openid")
	v := oauth2.GenerateVerifier()
	code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v), oidc.Nonce("nonce-1234567890"))
	tok, err := c.Exchange(context.Background(), code, oauth2.VerifierOption(v))
	if err != nil {
		e.t.Fatalf("%s: exchange: %v", id, err)
	}
	return c, tok
}

// verifyIDToken verifies the ID token of tok with go-oidc through
// discovery, accepting alg only, and returns its kid.
func verifyIDToken(t *testing.T, e *env, clientID string, tok *oauth2.Token, alg string) string {
	t.Helper()
	ctx := context.Background()
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		t.Fatalf("%s: no ID token", clientID)
	}
	p, err := oidc.NewProvider(ctx, e.issuer)
	if err != nil {
		t.Fatal(err)
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: clientID, SupportedSigningAlgs: []string{alg}}).Verify(ctx, raw)
	if err != nil {
		t.Fatalf("%s: %s ID token: %v", clientID, alg, err)
	}
	if idt.Subject != e.account.ID {
		t.Fatalf("%s: ID token sub %q", clientID, idt.Subject)
	}
	// And not under the other algorithm: the header says which it is.
	other := map[string]string{oidc.ES256: oidc.RS256, oidc.RS256: oidc.ES256}[alg]
	if _, err := p.Verifier(&oidc.Config{ClientID: clientID, SupportedSigningAlgs: []string{other}}).Verify(ctx, raw); err == nil {
		t.Fatalf("%s: the %s ID token verified as %s", clientID, alg, other)
	}
	jws, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	return jws.Signatures[0].Header.KeyID
}

// refreshed refreshes tok and returns the new token.
func refreshed(t *testing.T, c *oauth2.Config, tok *oauth2.Token) *oauth2.Token {
	t.Helper()
	old := *tok
	old.Expiry = time.Now().Add(-time.Minute)
	tok2, err := c.TokenSource(context.Background(), &old).Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok2
}

// TestIDTokenAlgorithms: each client's ID tokens, from the code flow and
// from a refresh, are signed as its id_token_signed_response_alg says, or
// as LINKSLOT_ID_TOKEN_ALG says when it says nothing; go-oidc verifies each
// through discovery with that algorithm alone. Access tokens stay ES256.
func TestIDTokenAlgorithms(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		e.addRP("rp-rs256", "RS256")
		e.addRP("rp-es256", "ES256")
		for _, c := range []struct{ client, alg string }{
			{publicID, "ES256"}, // no choice: the default, ES256
			{"rp-rs256", "RS256"},
			{"rp-es256", "ES256"},
		} {
			conf, tok := e.signIn(c.client)
			verifyIDToken(t, e, c.client, tok, c.alg)
			verifyAccessToken(t, e, tok.AccessToken) // ES256 whatever the ID token
			tok2 := refreshed(t, conf, tok)
			verifyIDToken(t, e, c.client, tok2, c.alg)
			verifyAccessToken(t, e, tok2.AccessToken)
		}
	})
}

// TestIDTokenAlgDefault: with LINKSLOT_ID_TOKEN_ALG=RS256 a client that
// names no algorithm gets RS256 ID tokens, one that names ES256 keeps it,
// and discovery lists RS256 first.
func TestIDTokenAlgDefault(t *testing.T) {
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Config.IDTokenAlg = "RS256" })
	e.addRP("rp-es256", "ES256")
	_, tok := e.signIn(publicID)
	verifyIDToken(t, e, publicID, tok, "RS256")
	verifyAccessToken(t, e, tok.AccessToken)
	_, tok = e.signIn("rp-es256")
	verifyIDToken(t, e, "rp-es256", tok, "ES256")

	resp, err := http.Get(e.issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Algs, " ") != "RS256 ES256" {
		t.Fatalf("id_token_signing_alg_values_supported %v, want RS256 then ES256", m.Algs)
	}
}

// jwksByAlg is the published JWKS's kids by algorithm.
func jwksByAlg(t *testing.T, e *env) map[string][]string {
	t.Helper()
	resp, err := http.Get(e.issuer + "/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, k := range set.Keys {
		if !k.IsPublic() || k.Use != "sig" || k.KeyID == "" {
			t.Fatalf("JWKS key %+v", k)
		}
		out[k.Algorithm] = append(out[k.Algorithm], k.KeyID)
	}
	return out
}

// TestJWKSAfterKeysRotate: `keys rotate` (the admin service the CLI calls)
// rotates the ES256 and the RS256 keys together; the JWKS then publishes
// the current and the previous key of each, ID tokens of both algorithms
// signed before the rotation still verify, and new ones carry the new kids.
func TestJWKSAfterKeysRotate(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		e.addRP("rp-rs256", "RS256")
		before := jwksByAlg(t, e)
		if len(before["ES256"]) != 1 || len(before["RS256"]) != 1 || len(before) != 2 {
			t.Fatalf("JWKS before the rotation %v, want one ES256 and one RS256 key", before)
		}
		_, esTok := e.signIn(publicID)
		_, rsTok := e.signIn("rp-rs256")

		svc, err := admin.New(admin.Config{Store: s, SecretKey: []byte(testSecretKey)})
		if err != nil {
			t.Fatal(err)
		}
		rotated, err := svc.RotateSigningKey(context.Background(), admin.Actor{ID: admin.ActorCLI}, store.KeyPurposeToken)
		if err != nil {
			t.Fatal(err)
		}
		if len(rotated) != 2 || rotated[0].Purpose != store.KeyPurposeToken || rotated[1].Purpose != store.KeyPurposeTokenRS256 {
			t.Fatalf("rotated %+v, want the token and the token-rs256 keys", rotated)
		}
		after := jwksByAlg(t, e)
		for alg, newKid := range map[string]string{"ES256": rotated[0].KID, "RS256": rotated[1].KID} {
			if len(after[alg]) != 2 || after[alg][0] != newKid || after[alg][1] != before[alg][0] {
				t.Fatalf("%s keys after the rotation %v, want the new %s then the previous %s", alg, after[alg], newKid, before[alg][0])
			}
		}
		verifyIDToken(t, e, publicID, esTok, "ES256")
		verifyIDToken(t, e, "rp-rs256", rsTok, "RS256")

		// The server picks the new keys up within a second (internal/keys).
		time.Sleep(1100 * time.Millisecond)
		_, esTok = e.signIn(publicID)
		_, rsTok = e.signIn("rp-rs256")
		if kid := verifyIDToken(t, e, publicID, esTok, "ES256"); kid != rotated[0].KID {
			t.Errorf("ES256 ID token after the rotation has kid %s, want %s", kid, rotated[0].KID)
		}
		if kid := verifyIDToken(t, e, "rp-rs256", rsTok, "RS256"); kid != rotated[1].KID {
			t.Errorf("RS256 ID token after the rotation has kid %s, want %s", kid, rotated[1].KID)
		}
	})
}

// TestRS256KeyAddedToOldDatabase: a database whose token keys predate
// RS256 ID tokens (one ES256 key, no RS256 key) gets its RS256 key when the
// server starts, as its first ES256 key was, and keeps its ES256 key.
func TestRS256KeyAddedToOldDatabase(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	if err := keys.NewManager(s, []byte(testSecretKey), store.KeyPurposeToken, nil).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	es, _ := s.ListSigningKeys(ctx, store.KeyPurposeToken)
	e := newEnv(t, s)
	rs, _ := s.ListSigningKeys(ctx, store.KeyPurposeTokenRS256)
	es2, _ := s.ListSigningKeys(ctx, store.KeyPurposeToken)
	if len(rs) != 1 || rs[0].Algorithm != "RS256" || len(es) != 1 || len(es2) != 1 || es2[0].ID != es[0].ID {
		t.Fatalf("after the start: RS256 keys %+v, ES256 keys %+v (before %+v)", rs, es2, es)
	}
	e.addRP("rp-rs256", "RS256")
	_, tok := e.signIn("rp-rs256")
	if kid := verifyIDToken(t, e, "rp-rs256", tok, "RS256"); kid != rs[0].ID {
		t.Fatalf("RS256 ID token kid %s, want %s", kid, rs[0].ID)
	}
}

// TestIDTokenAlgFromMetadataDocument: a client ID metadata document that
// asks for RS256 ID tokens gets them (the document's value over the
// server's default), through the code flow and a refresh.
func TestIDTokenAlgFromMetadataDocument(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	u := e.publish("/rp.json", map[string]any{"id_token_signed_response_alg": "RS256"})
	e.register(u, nil)
	conf, tok := e.signIn(u)
	verifyIDToken(t, e.env, u, tok, "RS256")
	verifyAccessToken(t, e.env, tok.AccessToken)
	verifyIDToken(t, e.env, u, refreshed(t, conf, tok), "RS256")

	plain := e.publish("/plain.json", nil)
	e.register(plain, nil)
	_, tok = e.signIn(plain)
	verifyIDToken(t, e.env, plain, tok, "ES256")
}
