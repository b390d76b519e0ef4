package authhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCodeFlow drives the whole flow with golang.org/x/oauth2 and go-oidc:
// authorize with PKCE and consent → code → tokens → ID token verified →
// access token verified against the JWKS → refresh rotated → revoked.
func TestCodeFlow(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		var secrets []string
		c := e.oauth(publicID, "", "openid")
		verifier := oauth2.GenerateVerifier()
		authURL := c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1234567890"))

		// Signed out: sent to sign in, then back to the same request.
		resp := e.get(authURL, "")
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc.Path != "/login" || !strings.HasPrefix(loc.Query().Get("next"), "/oauth2/authorize?") {
			t.Fatalf("signed out: %d %s", resp.StatusCode, loc)
		}

		// Consent shows exactly what is granted: openid + the defaults.
		resp = e.get(authURL, e.account.ID)
		var view struct {
			ClientName   string
			RedirectHost string
			Scopes       []struct{ Name string }
		}
		json.NewDecoder(resp.Body).Decode(&view)
		resp.Body.Close()
		var names []string
		for _, s := range view.Scopes {
			names = append(names, s.Name)
		}
		if want := []string{"openid", "bookings:read", "bookings:write"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("consent scopes %v, want %v", names, want)
		}
		if view.RedirectHost != "127.0.0.1:53682" {
			t.Fatalf("redirect host %q", view.RedirectHost)
		}

		code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1234567890"))
		secrets = append(secrets, code, verifier)
		tok, err := c.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if tok.RefreshToken == "" {
			t.Fatal("no refresh token although the client is registered for refresh_token (no offline_access asked)")
		}
		if got := tok.Extra("scope"); got != "openid bookings:read bookings:write" {
			t.Fatalf("token scope %v", got)
		}
		rawID, _ := tok.Extra("id_token").(string)
		secrets = append(secrets, tok.AccessToken, tok.RefreshToken, rawID)

		// ID token, verified with go-oidc through discovery.
		p, err := oidc.NewProvider(ctx, e.issuer)
		if err != nil {
			t.Fatal(err)
		}
		idt, err := p.Verifier(&oidc.Config{ClientID: publicID}).Verify(ctx, rawID)
		if err != nil {
			t.Fatalf("ID token: %v", err)
		}
		if idt.Subject != e.account.ID || idt.Nonce != "nonce-1234567890" {
			t.Fatalf("ID token sub %q nonce %q", idt.Subject, idt.Nonce)
		}

		// Access token: RFC 9068 JWT verified against the JWKS.
		claims := verifyAccessToken(t, e, tok.AccessToken)
		link, err := s.GetActiveLink(ctx, e.account.ID, publicID)
		if err != nil {
			t.Fatal(err)
		}
		if claims["link_id"] != link.ID || claims["client_id"] != publicID || claims["sub"] != e.account.ID ||
			claims["scope"] != "openid bookings:read bookings:write" || claims["iss"] != e.issuer {
			t.Fatalf("access token claims %v", claims)
		}
		exp, iat := claims["exp"].(float64), claims["iat"].(float64)
		if exp-iat != 15*60 {
			t.Fatalf("access token lifetime %v s", exp-iat)
		}

		// userinfo.
		req, _ := http.NewRequest(http.MethodGet, e.issuer+"/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		uresp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ui map[string]any
		json.NewDecoder(uresp.Body).Decode(&ui)
		uresp.Body.Close()
		if uresp.StatusCode != 200 || ui["sub"] != e.account.ID || ui["email"] != nil {
			t.Fatalf("userinfo %d %v", uresp.StatusCode, ui)
		}

		// Remembered consent: the second authorization skips the page.
		resp = e.get(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), e.account.ID)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound || resp.Header.Get("X-Test-Page") != "" {
			t.Fatalf("remembered consent: %d %s", resp.StatusCode, resp.Header.Get("X-Test-Page"))
		}
		// Asking for more shows the page again.
		more := e.oauth(publicID, "", "openid", "email")
		resp = e.get(more.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), e.account.ID)
		resp.Body.Close()
		if resp.Header.Get("X-Test-Page") != "consent" {
			t.Fatalf("more scopes did not ask again: %d", resp.StatusCode)
		}

		// Refresh: rotated, the new access token still valid for the resource.
		old := tok.RefreshToken
		tok.Expiry = time.Now().Add(-time.Minute)
		tok2, err := c.TokenSource(ctx, tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok2.AccessToken, tok2.RefreshToken)
		if tok2.RefreshToken == "" || tok2.RefreshToken == old || tok2.AccessToken == tok.AccessToken {
			t.Fatal("refresh did not rotate")
		}
		// A refresh answers a new ID token for the same person and client
		// (OpenID Connect Core §12.2: same iss, sub and aud), as OIDC relying
		// parties that keep their session by refreshing expect.
		rawID2, _ := tok2.Extra("id_token").(string)
		secrets = append(secrets, rawID2)
		idt2, err := p.Verifier(&oidc.Config{ClientID: publicID}).Verify(ctx, rawID2)
		if err != nil {
			t.Fatalf("refreshed ID token: %v", err)
		}
		if idt2.Subject != idt.Subject || idt2.Issuer != idt.Issuer || rawID2 == rawID {
			t.Fatalf("refreshed ID token sub %q iss %q (first: %q %q)", idt2.Subject, idt2.Issuer, idt.Subject, idt.Issuer)
		}
		c2 := verifyAccessToken(t, e, tok2.AccessToken)
		if c2["link_id"] != link.ID || c2["sub"] != e.account.ID {
			t.Fatalf("refreshed claims %v", c2)
		}
		if m := e.introspect(tok2.AccessToken); m["active"] != true || m["client_id"] != publicID {
			t.Fatalf("introspect %v", m)
		}

		// Revocation (public client authenticates with client_id).
		st, m, _ := e.tokenForm("/oauth2/revoke", url.Values{"token": {tok2.RefreshToken}, "client_id": {publicID}})
		if st != 200 {
			t.Fatalf("revoke: %d %v", st, m)
		}
		if m := e.introspect(tok2.RefreshToken); m["active"] != false {
			t.Fatalf("revoked refresh token introspects %v", m)
		}
		if m := e.introspect(tok2.AccessToken); m["active"] != false {
			t.Fatalf("access token of a revoked family introspects %v", m)
		}
		st, m, _ = e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2.RefreshToken}, "client_id": {publicID}})
		if st != 400 || m["error"] != "invalid_grant" {
			t.Fatalf("refresh after revocation: %d %v", st, m)
		}

		// No code, token, verifier or secret in any log line.
		secrets = append(secrets, e.confSecret)
		logs := e.logs.String()
		for _, sec := range secrets {
			if sec != "" && strings.Contains(logs, sec) {
				t.Fatalf("a secret appears in the logs")
			}
		}
	})
}

func verifyAccessToken(t *testing.T, e *env, raw string) map[string]any {
	t.Helper()
	jws, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Header
	if h.ExtraHeaders["typ"] != "at+jwt" || h.KeyID == "" || h.Algorithm != "ES256" {
		t.Fatalf("access token header %+v", h)
	}
	ks := oidc.NewRemoteKeySet(context.Background(), e.issuer+"/jwks.json")
	payload, err := ks.VerifySignature(context.Background(), raw)
	if err != nil {
		t.Fatalf("access token signature: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	aud := claims["aud"]
	switch a := aud.(type) {
	case string:
		aud = []any{a}
	}
	if !slices.Contains(aud.([]any), any(resource)) {
		t.Fatalf("aud %v, want %s", claims["aud"], resource)
	}
	for _, k := range []string{"iss", "sub", "aud", "exp", "iat", "jti", "client_id", "scope", "link_id"} {
		if _, ok := claims[k]; !ok {
			t.Fatalf("claim %s missing: %v", k, claims)
		}
	}
	return claims
}

func TestDiscovery(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	want := map[string]any{
		"issuer":                                e.issuer,
		"authorization_endpoint":                e.issuer + "/oauth2/authorize",
		"token_endpoint":                        e.issuer + "/oauth2/token",
		"jwks_uri":                              e.issuer + "/jwks.json",
		"revocation_endpoint":                   e.issuer + "/oauth2/revoke",
		"introspection_endpoint":                e.issuer + "/oauth2/introspect",
		"userinfo_endpoint":                     e.issuer + "/userinfo",
		"response_types_supported":              []any{"code"},
		"grant_types_supported":                 []any{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []any{"S256"},
		"token_endpoint_auth_methods_supported": []any{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
		// docs/reference.md §10: client ID metadata documents (policy registered).
		"client_id_metadata_document_supported":            true,
		"token_endpoint_auth_signing_alg_values_supported": []any{"ES256", "RS256"},
		"authorization_response_iss_parameter_supported":   true,
		"scopes_supported": []any{"openid", "profile", "email", "offline_access"},
		// Required by OpenID Connect Discovery 1.0 §3, which requires RS256
		// among the algorithms; the default (LINKSLOT_ID_TOKEN_ALG) first.
		"subject_types_supported":               []any{"public"},
		"id_token_signing_alg_values_supported": []any{"ES256", "RS256"},
		// docs/reference.md §14.
		"prompt_values_supported": []any{"none", "login", "consent", "select_account"},
		"claims_supported": []any{"iss", "sub", "aud", "exp", "iat", "auth_time", "rat", "nonce", "at_hash",
			"email", "preferred_username", "updated_at"},
	}
	var bodies []string
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		resp, err := http.Get(e.issuer + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s Content-Type %q", path, ct)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", path, got, want)
		}
		if _, ok := got["registration_endpoint"]; ok {
			t.Errorf("registration_endpoint advertised")
		}
		bodies = append(bodies, string(body))
	}
	if bodies[0] != bodies[1] {
		t.Error("the two discovery documents differ")
	}
	resp, err := http.Get(e.issuer + "/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	// The ES256 key of access and ID tokens, the RS256 key of the ID tokens
	// of clients that choose RS256.
	if len(set.Keys) != 2 || !set.Keys[0].IsPublic() || set.Keys[0].Algorithm != "ES256" ||
		!set.Keys[1].IsPublic() || set.Keys[1].Algorithm != "RS256" {
		t.Fatalf("jwks %+v", set)
	}
	_ = store.KindPKCE
}
