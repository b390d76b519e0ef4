package authhttp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/janitor"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const registerPath = "/oauth2/register"

// newDCREnv is the harness with LINKSLOT_DCR_POLICY=open, the
// registrations kept in s, and mod applied to the configuration.
func newDCREnv(t *testing.T, s *sqlstore.Store, mod func(*authhttp.Deps)) *env {
	t.Helper()
	return newEnvWith(t, s, func(d *authhttp.Deps) {
		d.Config.DCRPolicy = "open"
		d.DCRStore = s
		if mod != nil {
			mod(d)
		}
	})
}

// tsSDKRegistration is what the MCP TypeScript SDK posts: client_name,
// redirect_uris, grant_types, response_types, token_endpoint_auth_method
// and scope.
func tsSDKRegistration(redirect string) map[string]any {
	return map[string]any{"client_name": "Cursor", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none", "scope": "openid offline_access"}
}

// registration is a decoded answer of the registration endpoint.
type registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecret            string   `json:"client_secret"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at"`
	RegistrationAccessToken string   `json:"registration_access_token"`
	RegistrationClientURI   string   `json:"registration_client_uri"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
	IDTokenAlg              string   `json:"id_token_signed_response_alg"`
	Error                   string   `json:"error"`
	ErrorDescription        string   `json:"error_description"`
}

// send makes a request to the authorization server with a body and
// headers ("Name: value") and decodes a JSON answer into v.
func (e *env) send(method, rawURL string, body []byte, v any, headers ...string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(method, rawURL, bytes.NewReader(body))
	for _, h := range headers {
		k, val, _ := strings.Cut(h, ": ")
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && len(b) > 0 {
		if err := json.Unmarshal(b, v); err != nil {
			e.t.Fatalf("%s %s: non-JSON answer %d %q", method, rawURL, resp.StatusCode, b)
		}
	}
	return resp
}

// register posts meta as JSON and returns the status and decoded answer.
func (e *env) register(meta any) (*http.Response, registration) {
	e.t.Helper()
	b, _ := json.Marshal(meta)
	var r registration
	resp := e.send(http.MethodPost, e.issuer+registerPath, b, &r, "Content-Type: application/json")
	return resp, r
}

func (e *env) mustRegister(meta any) registration {
	e.t.Helper()
	resp, r := e.register(meta)
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("register: %d %+v", resp.StatusCode, r)
	}
	return r
}

// clientCount is how many clients the store holds.
func (e *env) clientCount() int {
	e.t.Helper()
	cs, err := e.s.ListClients(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(cs)
}

func (e *env) auditActions() []string {
	e.t.Helper()
	evs, err := e.s.ListAuditEvents(context.Background(), 100, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.ActorID+" "+ev.Action+" "+ev.Target)
	}
	return out
}

// TestDCRPolicyOff: by default nothing registers and nothing is advertised.
func TestDCRPolicyOff(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		var m map[string]any
		e.send(http.MethodGet, e.issuer+p, nil, &m)
		if _, ok := m["registration_endpoint"]; ok || m["issuer"] != e.issuer {
			t.Fatalf("%s advertises registration with the policy off: %v", p, m)
		}
	}
	before := e.clientCount()
	b, _ := json.Marshal(tsSDKRegistration(e.redirect))
	resp := e.send(http.MethodPost, e.issuer+registerPath, b, nil, "Content-Type: application/json")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("registration with the policy off: %d, want 404", resp.StatusCode)
	}
	if n := e.clientCount(); n != before {
		t.Fatalf("%d clients after a refused registration, want %d", n, before)
	}
}

// TestDCRRegisterLinkReadDelete: a client registers the way the MCP
// TypeScript SDK does, links through authorize and token with
// golang.org/x/oauth2, reads its registration, and deletes itself, which
// takes its tokens with it.
func TestDCRRegisterLinkReadDelete(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newDCREnv(t, s, nil)
		for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
			var m map[string]any
			e.send(http.MethodGet, e.issuer+p, nil, &m)
			if m["registration_endpoint"] != e.issuer+registerPath {
				t.Fatalf("%s: registration_endpoint %v", p, m["registration_endpoint"])
			}
		}
		resp, r := e.register(tsSDKRegistration(e.redirect))
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("register: %d %v %+v", resp.StatusCode, resp.Header, r)
		}
		if !strings.HasPrefix(r.ClientID, "dcr-") || len(r.ClientID) < 16 || r.ClientIDIssuedAt == 0 ||
			len(r.RegistrationAccessToken) < 32 || r.RegistrationClientURI != e.issuer+registerPath+"/"+r.ClientID ||
			r.ClientSecret != "" || r.ClientSecretExpiresAt != nil {
			t.Fatalf("registration answer %+v", r)
		}
		// The scope asked (openid offline_access) names no private scope:
		// the client is allowed the private scopes of the policy too.
		if r.Scope != "openid offline_access bookings:read bookings:write" || r.TokenEndpointAuthMethod != "none" ||
			r.ClientName != "Cursor" || !slices.Equal(r.RedirectURIs, []string{e.redirect}) ||
			!slices.Equal(r.GrantTypes, []string{"authorization_code", "refresh_token"}) || !slices.Equal(r.ResponseTypes, []string{"code"}) {
			t.Fatalf("accepted metadata %+v", r)
		}
		reg, err := s.GetClientRegistration(context.Background(), r.ClientID)
		if err != nil || reg.AccessTokenHash != store.HashSecret(r.RegistrationAccessToken) || strings.Contains(string(reg.Metadata), r.RegistrationAccessToken) {
			t.Fatalf("stored registration %+v, %v: the token must be stored hashed only", reg, err)
		}
		c, _ := s.GetClient(context.Background(), r.ClientID)
		if !c.Public || !slices.Equal(c.DefaultScopes, []string{"bookings:read", "bookings:write"}) {
			t.Fatalf("stored client %+v", c)
		}

		// RFC 7592 read: the right token, and three wrong ways.
		var got registration
		if resp := e.send(http.MethodGet, r.RegistrationClientURI, nil, &got, "Authorization: Bearer "+r.RegistrationAccessToken); resp.StatusCode != http.StatusOK ||
			got.ClientID != r.ClientID || got.Scope != r.Scope || got.RegistrationAccessToken != "" || got.ClientName != "Cursor" {
			t.Fatalf("read: %d %+v", resp.StatusCode, got)
		}
		other := e.mustRegister(tsSDKRegistration(e.redirect))
		unauthorized := func(what, uri string, headers ...string) {
			t.Helper()
			for _, m := range []string{http.MethodGet, http.MethodDelete} {
				var ans registration
				resp := e.send(m, uri, nil, &ans, headers...)
				if resp.StatusCode != http.StatusUnauthorized || ans.Error != "invalid_token" || ans.ErrorDescription == "" ||
					!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("%s %s: %d %+v", m, what, resp.StatusCode, ans)
				}
			}
		}
		unauthorized("without a token", r.RegistrationClientURI)
		unauthorized("with a wrong token", r.RegistrationClientURI, "Authorization: Bearer "+clients.GenerateSecret())
		unauthorized("with another client's token", r.RegistrationClientURI, "Authorization: Bearer "+other.RegistrationAccessToken)
		unauthorized("of a client that does not exist", e.issuer+registerPath+"/dcr-nosuchclient", "Authorization: Bearer "+r.RegistrationAccessToken)
		if _, err := s.GetClient(context.Background(), r.ClientID); err != nil {
			t.Fatalf("a refused DELETE removed the client: %v", err)
		}
		if resp := e.send(http.MethodPut, r.RegistrationClientURI, []byte(`{}`), nil, "Authorization: Bearer "+r.RegistrationAccessToken,
			"Content-Type: application/json"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, DELETE" {
			t.Fatalf("PUT: %d %v", resp.StatusCode, resp.Header)
		}

		// Link: authorize (consent says the app is not verified) → token.
		oc := &oauth2.Config{ClientID: r.ClientID, RedirectURL: e.redirect, Scopes: []string{"openid"},
			Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
		v := oauth2.GenerateVerifier()
		view := e.consentView(oc.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v)))
		if !view.Dynamic || !view.Unverified || view.ClientHost != "127.0.0.1:53682" || view.ClientName != "Cursor" || !view.AllLoopback ||
			view.ClientLogo != "" || view.RedirectURL != e.redirect {
			t.Fatalf("consent view of a dynamic client %+v", view)
		}
		code := e.code(oc, e.account.ID, oauth2.S256ChallengeOption(v))
		tok, err := oc.Exchange(context.Background(), code, oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Extra("scope") != "openid bookings:read bookings:write" || tok.RefreshToken == "" {
			t.Fatalf("token: scope %v, refresh %q", tok.Extra("scope"), tok.RefreshToken)
		}
		if m := e.introspect(tok.AccessToken); m["active"] != true || m["client_id"] != r.ClientID {
			t.Fatalf("introspection before delete: %v", m)
		}

		// Delete: 204, and everything the client held is gone.
		if resp := e.send(http.MethodDelete, r.RegistrationClientURI, nil, nil, "Authorization: Bearer "+r.RegistrationAccessToken); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d", resp.StatusCode)
		}
		if _, err := s.GetClient(context.Background(), r.ClientID); err == nil {
			t.Fatal("the client survived its deletion")
		}
		if links, _ := s.ListAccountLinks(context.Background(), e.account.ID); slices.ContainsFunc(links, func(l store.Link) bool { return l.ClientID == r.ClientID }) {
			t.Fatalf("the client's link survived its deletion: %+v", links)
		}
		if m := e.introspect(tok.AccessToken); m["active"] != false {
			t.Fatalf("the access token is still active after the delete: %v", m)
		}
		st, m, _ := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {r.ClientID}})
		if st == http.StatusOK {
			t.Fatalf("the refresh token still works after the delete: %v", m)
		}
		unauthorized("after the delete", r.RegistrationClientURI, "Authorization: Bearer "+r.RegistrationAccessToken)
		want := []string{"dcr client.delete_dynamic " + r.ClientID, "dcr client.register_dynamic " + other.ClientID, "dcr client.register_dynamic " + r.ClientID}
		if got := e.auditActions(); !slices.Equal(got, want) {
			t.Fatalf("audit log %v, want %v", got, want)
		}
	})
}

// consentView opens authURL signed in and returns the consent page's view.
func (e *env) consentView(authURL string) consent.ConsentView {
	e.t.Helper()
	resp := e.get(authURL, e.account.ID)
	defer resp.Body.Close()
	var v consent.ConsentView
	if resp.Header.Get("X-Test-Page") != "consent" {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("no consent page: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// TestDCRConfidentialClient: a client_secret_basic registration is
// answered its secret once, stored hashed as every client secret is, and
// authenticates at the token endpoint with it.
func TestDCRConfidentialClient(t *testing.T) {
	e := newDCREnv(t, sqltest.SQLite(t), nil)
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		meta := tsSDKRegistration(e.redirect)
		meta["token_endpoint_auth_method"], meta["scope"], meta["id_token_signed_response_alg"] = method, "openid bookings:read", "RS256"
		r := e.mustRegister(meta)
		if len(r.ClientSecret) < 32 || r.ClientSecretExpiresAt == nil || *r.ClientSecretExpiresAt != 0 || r.TokenEndpointAuthMethod != method ||
			r.Scope != "openid bookings:read" || r.IDTokenAlg != "RS256" {
			t.Fatalf("%s registration %+v", method, r)
		}
		c, _ := e.s.GetClient(context.Background(), r.ClientID)
		reg, _ := e.s.GetClientRegistration(context.Background(), r.ClientID)
		if c.IDTokenSignedResponseAlg != "RS256" {
			t.Fatalf("%s: the client's ID token algorithm is %q, want the registered RS256", method, c.IDTokenSignedResponseAlg)
		}
		if c.Public || c.SecretHash == r.ClientSecret || !clients.CompareSecret(c.SecretHash, r.ClientSecret) || strings.Contains(string(reg.Metadata), r.ClientSecret) {
			t.Fatalf("%s: the secret is not stored hashed only: %+v", method, c)
		}
		var read registration
		e.send(http.MethodGet, r.RegistrationClientURI, nil, &read, "Authorization: Bearer "+r.RegistrationAccessToken)
		if read.ClientSecret != "" || read.IDTokenAlg != "RS256" || read.TokenEndpointAuthMethod != method {
			t.Fatalf("%s read %+v", method, read)
		}
		style := oauth2.AuthStyleInHeader
		if method == "client_secret_post" {
			style = oauth2.AuthStyleInParams
		}
		oc := &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, RedirectURL: e.redirect, Scopes: []string{"openid"},
			Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token", AuthStyle: style}}
		v := oauth2.GenerateVerifier()
		tok, err := oc.Exchange(context.Background(), e.code(oc, e.account.ID, oauth2.S256ChallengeOption(v)), oauth2.VerifierOption(v))
		if err != nil || tok.Extra("scope") != "openid bookings:read" {
			t.Fatalf("%s: token %v, %v", method, tok, err)
		}
		idt, _ := tok.Extra("id_token").(string)
		head, _, _ := strings.Cut(idt, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(head)
		var h struct{ Alg string }
		if json.Unmarshal(raw, &h); h.Alg != "RS256" {
			t.Fatalf("%s: the ID token is signed %q, want the registered RS256", method, h.Alg)
		}
	}
}

// TestDCRPrivateUseRedirect: Cursor's cursor:// callback registers, its
// consent page names where the person goes back, and the code goes there.
func TestDCRPrivateUseRedirect(t *testing.T) {
	e := newDCREnv(t, sqltest.SQLite(t), nil)
	const back = "cursor://anysphere.cursor-mcp/oauth/callback"
	r := e.mustRegister(tsSDKRegistration(back))
	oc := &oauth2.Config{ClientID: r.ClientID, RedirectURL: back, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	v := oauth2.GenerateVerifier()
	authURL := oc.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v))
	view := e.consentView(authURL)
	if !view.Dynamic || !view.Unverified || view.ClientHost != "cursor://anysphere.cursor-mcp" || view.AllLoopback || view.RedirectURL != back {
		t.Fatalf("consent view %+v", view)
	}
	u := e.authorize(authURL, e.account.ID, "allow")
	if u.Scheme != "cursor" || u.Host != "anysphere.cursor-mcp" || u.Query().Get("code") == "" {
		t.Fatalf("redirect to %s", u)
	}
	if _, err := oc.Exchange(context.Background(), u.Query().Get("code"), oauth2.VerifierOption(v)); err != nil {
		t.Fatal(err)
	}
}

// TestDCRScopesCut: the scope asked is cut to LINKSLOT_DCR_SCOPES.
func TestDCRScopesCut(t *testing.T) {
	e := newDCREnv(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Config.DCRScopes = []string{"openid", "bookings:read"} })
	for _, c := range []struct{ ask, want string }{
		{"", "openid bookings:read"},
		{"openid", "openid bookings:read"},
		{"openid profile email offline_access bookings:read bookings:write", "openid bookings:read"},
		{"bookings:read", "openid bookings:read"},
		{"mcp:tools unknown", "openid bookings:read"},
	} {
		meta := tsSDKRegistration(e.redirect)
		meta["scope"] = c.ask
		if r := e.mustRegister(meta); r.Scope != c.want {
			t.Errorf("scope %q registered as %q, want %q", c.ask, r.Scope, c.want)
		}
	}
	// A scope the client was not allowed is refused at authorization.
	r := e.mustRegister(tsSDKRegistration(e.redirect))
	oc := &oauth2.Config{ClientID: r.ClientID, RedirectURL: e.redirect, Scopes: []string{"openid", "bookings:write"},
		Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize"}}
	u := e.authorize(oc.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), e.account.ID, "allow")
	if u.Query().Get("error") != "invalid_scope" {
		t.Fatalf("bookings:write beyond the policy: %s", u)
	}
}

// TestDCRRefusals: every refused registration answers 400 with its RFC 7591
// code and a description, and stores nothing.
func TestDCRRefusals(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newDCREnv(t, s, nil)
		ok := func(mod func(m map[string]any)) []byte {
			m := tsSDKRegistration(e.redirect)
			mod(m)
			b, _ := json.Marshal(m)
			return b
		}
		cases := []struct {
			name, contentType string
			body              []byte
			code, says        string
		}{
			{"not JSON", "application/json", []byte("client_name=x"), "invalid_client_metadata", "JSON"},
			{"a JSON array", "application/json", []byte(`[{"redirect_uris":["https://app.example/cb"]}]`), "invalid_client_metadata", "JSON object"},
			{"trailing data", "application/json", append(ok(func(map[string]any) {}), []byte(` {}`)...), "invalid_client_metadata", "nothing after"},
			{"form content type", "application/x-www-form-urlencoded", ok(func(map[string]any) {}), "invalid_client_metadata", "Content-Type: application/json"},
			{"no content type", "", ok(func(map[string]any) {}), "invalid_client_metadata", "Content-Type"},
			{"body over 16 KiB", "application/json", ok(func(m map[string]any) { m["software_statement"] = strings.Repeat("x", 17<<10) }), "invalid_client_metadata", "larger than"},
			{"no redirect_uris", "application/json", ok(func(m map[string]any) { delete(m, "redirect_uris") }), "invalid_redirect_uri", "redirect_uris is required"},
			{"redirect_uris a string", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = "https://app.example/cb" }), "invalid_client_metadata", "redirect_uris must be an array"},
			{"http on a public host", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = []string{"http://app.example/cb"} }), "invalid_redirect_uri", "must use https"},
			{"fragment", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = []string{"https://app.example/cb#x"} }), "invalid_redirect_uri", "fragment"},
			{"relative", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = []string{"/cb"} }), "invalid_redirect_uri", "not an absolute URL"},
			{"scheme without a dot", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = []string{"myapp://cb"} }), "invalid_redirect_uri", "reverse-DNS"},
			{"javascript scheme", "application/json", ok(func(m map[string]any) { m["redirect_uris"] = []string{"javascript://x.example/%0aalert(1)"} }), "invalid_redirect_uri", "redirect_uris[0]"},
			{"one bad among good", "application/json", ok(func(m map[string]any) {
				m["redirect_uris"] = []string{"https://app.example/cb", "http://evil.example/cb"}
			}), "invalid_redirect_uri", "redirect_uris[1]"},
			{"implicit grant", "application/json", ok(func(m map[string]any) { m["grant_types"] = []string{"authorization_code", "implicit"} }), "invalid_client_metadata", `"implicit"`},
			{"client_credentials grant", "application/json", ok(func(m map[string]any) { m["grant_types"] = []string{"client_credentials"} }), "invalid_client_metadata", "grant_types"},
			{"refresh without code", "application/json", ok(func(m map[string]any) { m["grant_types"] = []string{"refresh_token"} }), "invalid_client_metadata", "must include authorization_code"},
			{"token response type", "application/json", ok(func(m map[string]any) { m["response_types"] = []string{"code", "token"} }), "invalid_client_metadata", `"token"`},
			{"private_key_jwt", "application/json", ok(func(m map[string]any) { m["token_endpoint_auth_method"] = "private_key_jwt" }), "invalid_client_metadata", "token_endpoint_auth_method"},
			{"name over 200 characters", "application/json", ok(func(m map[string]any) { m["client_name"] = strings.Repeat("é", 201) }), "invalid_client_metadata", "client_name has 201 characters"},
			{"control character in the name", "application/json", ok(func(m map[string]any) { m["client_name"] = "Cur\x00sor" }), "invalid_client_metadata", "client_name"},
			{"http logo_uri", "application/json", ok(func(m map[string]any) { m["logo_uri"] = "http://app.example/logo.png" }), "invalid_client_metadata", "logo_uri must be an https URL"},
			{"http policy_uri", "application/json", ok(func(m map[string]any) { m["policy_uri"] = "http://app.example/privacy" }), "invalid_client_metadata", "policy_uri must be an https URL"},
			{"http tos_uri", "application/json", ok(func(m map[string]any) { m["tos_uri"] = "http://app.example/tos" }), "invalid_client_metadata", "tos_uri must be an https URL"},
			{"http client_uri", "application/json", ok(func(m map[string]any) { m["client_uri"] = "javascript:alert(1)" }), "invalid_client_metadata", "client_uri must be an https URL"},
			{"HS256 ID tokens", "application/json", ok(func(m map[string]any) { m["id_token_signed_response_alg"] = "HS256" }), "invalid_client_metadata", "id_token_signed_response_alg"},
			{"scope a list", "application/json", ok(func(m map[string]any) { m["scope"] = []string{"openid"} }), "invalid_client_metadata", "scope must be a string"},
		}
		for _, c := range cases {
			before := e.clientCount()
			req, _ := http.NewRequest(http.MethodPost, e.issuer+registerPath, bytes.NewReader(c.body))
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var ans registration
			json.NewDecoder(resp.Body).Decode(&ans)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || ans.Error != c.code || !strings.Contains(ans.ErrorDescription, c.says) || ans.ClientID != "" {
				t.Errorf("%s: %d %q %q, want 400 %s saying %q", c.name, resp.StatusCode, ans.Error, ans.ErrorDescription, c.code, c.says)
			}
			if n := e.clientCount(); n != before {
				t.Errorf("%s: %d clients after the refusal, want %d", c.name, n, before)
			}
		}
		if got := e.auditActions(); len(got) != 0 {
			t.Fatalf("refusals were audited as registrations: %v", got)
		}
		// Unknown fields are ignored, not fatal.
		if r := e.mustRegister(map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "software_statement": "eyJ.x.y",
			"jwks": map[string]any{"keys": []any{}}, "frobnicate": 3}); r.ClientName != dcr.DefaultName || r.TokenEndpointAuthMethod != "none" {
			t.Fatalf("minimal registration %+v", r)
		}
	})
}

// TestDCRRateSharedByServers: two authorization servers on one database
// hold one client address to LINKSLOT_DCR_RATE registrations an hour
// together, then answer 429 with Retry-After.
func TestDCRRateSharedByServers(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		const rate = 4
		var deps authhttp.Deps
		a := newDCREnv(t, s, func(d *authhttp.Deps) { d.Config.DCRRate = rate; deps = *d })
		b := a.replica(deps)
		for i := range rate {
			e := []*env{a, b}[i%2]
			if resp, r := e.register(tsSDKRegistration(e.redirect)); resp.StatusCode != http.StatusCreated {
				t.Fatalf("registration %d: %d %+v", i+1, resp.StatusCode, r)
			}
		}
		before := a.clientCount()
		for _, e := range []*env{a, b} {
			resp, r := e.register(tsSDKRegistration(e.redirect))
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 3600 || r.Error != "rate_limited" || r.ErrorDescription == "" {
				t.Fatalf("registration %d: %d Retry-After %q %+v, want 429", rate+1, resp.StatusCode, resp.Header.Get("Retry-After"), r)
			}
		}
		if n := a.clientCount(); n != before {
			t.Fatalf("%d clients after refused registrations, want %d", n, before)
		}
		// An hour later the address may register again.
		a.offset.Store(int64(time.Hour + time.Second))
		if resp, r := a.register(tsSDKRegistration(a.redirect)); resp.StatusCode != http.StatusCreated {
			t.Fatalf("an hour later: %d %+v", resp.StatusCode, r)
		}
	})
}

// replica is a second authorization server with deps on e's database
// (and e's clock), as another replica behind a load balancer.
func (e *env) replica(deps authhttp.Deps) *env {
	e.t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	e.t.Cleanup(srv.Close)
	deps.Config.Issuer = srv.URL
	var err error
	if h, err = authhttp.New(context.Background(), deps); err != nil {
		e.t.Fatal(err)
	}
	return &env{t: e.t, s: e.s, srv: srv, issuer: srv.URL, account: e.account, account2: e.account2,
		confSecret: e.confSecret, logs: e.logs, redirect: e.redirect}
}

// TestDCRJanitorDeletesUnused: a registration nobody linked within 24 hours
// is deleted by the janitor; one that was used stays.
func TestDCRJanitorDeletesUnused(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newDCREnv(t, s, nil)
		unused, used := e.mustRegister(tsSDKRegistration(e.redirect)), e.mustRegister(tsSDKRegistration(e.redirect))
		oc := &oauth2.Config{ClientID: used.ClientID, RedirectURL: e.redirect, Scopes: []string{"openid"},
			Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
		v := oauth2.GenerateVerifier()
		if _, err := oc.Exchange(context.Background(), e.code(oc, e.account.ID, oauth2.S256ChallengeOption(v)), oauth2.VerifierOption(v)); err != nil {
			t.Fatal(err)
		}
		sweep := func(after time.Duration) int64 {
			j, err := janitor.New(janitor.Config{Leases: s, Tasks: janitor.Tasks(s), Clock: func() time.Time { return e.now().Add(after) }})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range j.RunOnce(context.Background()) {
				if r.Task == "client_registrations" {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					return r.Deleted
				}
			}
			t.Fatal("the janitor has no client_registrations task")
			return 0
		}
		if n := sweep(23 * time.Hour); n != 0 {
			t.Fatalf("the janitor deleted %d registrations within their day", n)
		}
		if n := sweep(24*time.Hour + time.Minute); n != 1 {
			t.Fatalf("the janitor deleted %d registrations after a day, want the unused one", n)
		}
		if _, err := s.GetClient(context.Background(), unused.ClientID); err == nil {
			t.Fatal("the unused registration survived the janitor")
		}
		var r registration
		if resp := e.send(http.MethodGet, used.RegistrationClientURI, nil, &r, "Authorization: Bearer "+used.RegistrationAccessToken); resp.StatusCode != http.StatusOK {
			t.Fatalf("the used registration after the janitor: %d", resp.StatusCode)
		}
	})
}

// TestDCRCORS: a browser client (the MCP Inspector) may register and
// manage its registration from an allowed origin.
func TestDCRCORS(t *testing.T) {
	const origin = "http://localhost:6274"
	e := newDCREnv(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Config.AllowedOrigins = []string{origin} })
	for _, p := range []string{registerPath, registerPath + "/dcr-anything"} {
		resp := e.send(http.MethodOptions, e.issuer+p, nil, nil, "Origin: "+origin, "Access-Control-Request-Method: POST")
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "DELETE") {
			t.Fatalf("preflight %s: %d %v", p, resp.StatusCode, resp.Header)
		}
		if resp := e.send(http.MethodOptions, e.issuer+p, nil, nil, "Origin: https://evil.example"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("preflight from another origin %s: %d", p, resp.StatusCode)
		}
	}
	b, _ := json.Marshal(tsSDKRegistration("http://localhost:6274/oauth/callback"))
	var r registration
	resp := e.send(http.MethodPost, e.issuer+registerPath, b, &r, "Content-Type: application/json", "Origin: "+origin)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("register from %s: %d %v", origin, resp.StatusCode, resp.Header)
	}
	resp = e.send(http.MethodDelete, r.RegistrationClientURI, nil, nil, "Origin: "+origin, "Authorization: Bearer "+r.RegistrationAccessToken)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("delete from %s: %d %v", origin, resp.StatusCode, resp.Header)
	}
}
