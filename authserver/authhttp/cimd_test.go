package authhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// cimdEnv is an authorization server in development mode whose outside
// fetches trust the test CA of a document host on loopback.
type cimdEnv struct {
	*env
	host *testkit.DocHost
	m    *metrics.Metrics
	deps authhttp.Deps // as the server was built, for a second replica
}

func newCIMDEnv(t *testing.T, policy, openScopes string) *cimdEnv {
	t.Helper()
	host := testkit.NewDocHost(t)
	m := metrics.New("authserver")
	var deps authhttp.Deps
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) {
		d.Config.CIMDPolicy = policy
		if openScopes != "" {
			d.Config.CIMDOpenScopes = strings.Fields(openScopes)
		}
		d.Fetch.RootCAs = host.CA.Pool()
		d.Metrics = m
		deps = *d
	})
	return &cimdEnv{env: e, host: host, m: m, deps: deps}
}

// doc is a client ID metadata document for url with the given fields
// overriding the defaults.
func doc(u string, fields map[string]any) string {
	d := map[string]any{
		"client_id":     u,
		"client_name":   "Example Agent",
		"redirect_uris": []string{"http://127.0.0.1/callback", "https://agent.example/cb"},
	}
	for k, v := range fields {
		if v == nil {
			delete(d, k)
		} else {
			d[k] = v
		}
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// publish puts a document at path whose client_id is its own URL.
func (e *cimdEnv) publish(path string, fields map[string]any, headers ...string) string {
	u := e.host.Base + path
	e.host.Put(path, http.StatusOK, doc(u, fields), headers...)
	return u
}

// register records u as a URL client an administrator registered.
func (e *cimdEnv) register(u string, mod func(*store.Client)) {
	e.t.Helper()
	now := store.SystemClock()
	c := store.Client{ID: u, Name: "Example Agent", Public: true,
		AllowedScopes: []string{"openid", "offline_access", "bookings:read", "bookings:write"},
		DefaultScopes: []string{"bookings:read"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		CreatedAt: now, UpdatedAt: now}
	if mod != nil {
		mod(&c)
	}
	if err := e.s.CreateClient(context.Background(), c); err != nil {
		e.t.Fatal(err)
	}
}

// link runs the code flow for client u and returns the token.
func (e *cimdEnv) link(u string, scopes ...string) *oauth2.Token {
	e.t.Helper()
	c := e.oauth(u, "", scopes...)
	v := oauth2.GenerateVerifier()
	code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v))
	tok, err := c.Exchange(context.Background(), code, oauth2.VerifierOption(v))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	return tok
}

// refused asserts that authorizing client u shows the error page (never a
// redirect) with a message containing want.
func (e *cimdEnv) refused(u, redirect, want string) {
	e.t.Helper()
	c := e.oauth(u, "", "openid")
	if redirect != "" {
		c.RedirectURL = redirect
	}
	resp := e.get(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), e.account.ID)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Test-Page") != "error" || resp.Header.Get("Location") != "" {
		e.t.Fatalf("want the error page, got %d %q Location %q: %s", resp.StatusCode, resp.Header.Get("X-Test-Page"), resp.Header.Get("Location"), body)
	}
	if !strings.Contains(string(body), want) {
		e.t.Fatalf("error page %q does not say %q", body, want)
	}
	if strings.Contains(string(body), "{") {
		e.t.Fatalf("error page shows the document: %q", body)
	}
}

// fetches is linkslot_fetches_total{kind,outcome}.
func (e *cimdEnv) fetches(kind, outcome string) float64 {
	e.t.Helper()
	fams, err := e.m.Registry().Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "linkslot_fetches_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "kind") == kind && label(m, "outcome") == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// A registered URL client links with its document's redirect URI (a
// loopback one on another port), refreshes, and its document is fetched
// once for two links because Cache-Control allows it.
func TestCIMDRegisteredClientLinks(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	u := e.publish("/oauth/client.json", map[string]any{
		"grant_types":    []string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"},
		"response_types": []string{"code", "token"},
		"software_id":    "unknown-field", "logo_uri": "https://agent.example/logo.png",
	}, "Cache-Control", "public, max-age=3600")
	e.register(u, nil)

	tok := e.link(u, "openid", "offline_access")
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token")
	}
	in := e.introspect(tok.AccessToken)
	if in["client_id"] != u || in["active"] != true || !strings.Contains(in["scope"].(string), "bookings:read") {
		t.Fatalf("introspection %v", in)
	}
	c := e.oauth(u, "")
	fresh, err := c.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v", err)
	}
	// A second link (another person): the document comes from the cache.
	c2 := e.oauth(u, "", "openid")
	v := oauth2.GenerateVerifier()
	if _, err := c2.Exchange(context.Background(), e.code(c2, e.account2.ID, oauth2.S256ChallengeOption(v)), oauth2.VerifierOption(v)); err != nil {
		t.Fatal(err)
	}
	if n := e.host.Hits("/oauth/client.json"); n != 1 {
		t.Fatalf("document fetched %d times for two links and a refresh, want 1", n)
	}
	if e.fetches("cimd", "ok") != 1 || e.fetches("cimd", "cached") < 2 {
		t.Fatalf("metrics: ok %v cached %v", e.fetches("cimd", "ok"), e.fetches("cimd", "cached"))
	}
}

// Every refusal of a URL client ends on the error page, says which rule
// failed, and never redirects.
func TestCIMDRefusals(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	base := e.host.Base
	cases := []struct {
		name     string
		setup    func() string // returns the client_id
		redirect string
		want     string
	}{
		{"unregistered is not fetched", func() string {
			return e.publish("/unregistered.json", nil)
		}, "", "no administrator of this Linkslot server has registered"},
		{"disabled", func() string {
			u := e.publish("/disabled.json", nil)
			e.register(u, func(c *store.Client) { c.Disabled = true })
			return u
		}, "", "has disabled this app"},
		{"client_id differs from the URL", func() string {
			u := base + "/mismatch.json"
			e.host.Put("/mismatch.json", 200, doc(base+"/other.json", nil))
			e.register(u, nil)
			return u
		}, "", "its client_id is not exactly the address"},
		{"client_id differs by a trailing slash", func() string {
			u := base + "/slash.json"
			e.host.Put("/slash.json", 200, doc(u+"/", nil))
			e.register(u, nil)
			return u
		}, "", "its client_id is not exactly the address"},
		{"no client_name", func() string {
			u := e.publish("/noname.json", map[string]any{"client_name": nil})
			e.register(u, nil)
			return u
		}, "", "it has no client_name"},
		{"no redirect_uris", func() string {
			u := e.publish("/noredirect.json", map[string]any{"redirect_uris": nil})
			e.register(u, nil)
			return u
		}, "", "it lists no redirect_uris"},
		{"a redirect_uri over plain http", func() string {
			u := e.publish("/httpredirect.json", map[string]any{"redirect_uris": []string{"http://agent.example/cb"}})
			e.register(u, nil)
			return u
		}, "", "one of its redirect_uris is not allowed"},
		{"redirect_uri not in the document", func() string {
			u := e.publish("/listed.json", nil)
			e.register(u, nil)
			return u
		}, "https://evil.example/cb", "asked Linkslot to send you back to https://evil.example/cb, which is not an address it may use"},
		{"loopback redirect on another path", func() string {
			u := e.publish("/loopbackpath.json", nil)
			e.register(u, nil)
			return u
		}, "http://127.0.0.1:4000/elsewhere", "It may use: http://127.0.0.1/callback (any port), https://agent.example/cb."},
		{"shared secret method", func() string {
			u := e.publish("/secret.json", map[string]any{"token_endpoint_auth_method": "client_secret_basic"})
			e.register(u, nil)
			return u
		}, "", "asks for a shared secret"},
		{"client_secret in the document", func() string {
			u := e.publish("/withsecret.json", map[string]any{"client_secret": "s3cr3t"})
			e.register(u, nil)
			return u
		}, "", "carries a client_secret"},
		{"private_key_jwt without keys", func() string {
			u := e.publish("/nokeys.json", map[string]any{"token_endpoint_auth_method": "private_key_jwt"})
			e.register(u, nil)
			return u
		}, "", "neither jwks_uri nor jwks"},
		{"an ID token algorithm this server does not sign with", func() string {
			u := e.publish("/hs256.json", map[string]any{"id_token_signed_response_alg": "HS256"})
			e.register(u, nil)
			return u
		}, "", "its id_token_signed_response_alg is not ES256 or RS256"},
		{"wrong type", func() string {
			u := e.publish("/wrongtype.json", map[string]any{"redirect_uris": "https://agent.example/cb"})
			e.register(u, nil)
			return u
		}, "", "has the wrong type"},
		{"not JSON", func() string {
			u := base + "/page.json"
			e.host.Put("/page.json", 200, "<html>hello</html>", "Content-Type", "text/html")
			e.register(u, nil)
			return u
		}, "", "did not answer with a JSON document"},
		{"not found", func() string {
			u := base + "/missing.json"
			e.register(u, nil)
			return u
		}, "", "did not answer with the document"},
		{"redirect", func() string {
			u := base + "/moved.json"
			e.host.Put("/moved.json", http.StatusFound, "", "Location", base+"/oauth/client.json")
			e.register(u, nil)
			return u
		}, "", "does not follow redirects"},
		{"too large", func() string {
			u := e.publish("/large.json", map[string]any{"padding": strings.Repeat("x", 6000)})
			e.register(u, nil)
			return u
		}, "", "larger than Linkslot accepts"},
		{"no path", func() string {
			u := base
			e.register(u, nil)
			return u
		}, "", "must have a path"},
		{"fragment", func() string {
			u := base + "/frag.json#x"
			e.register(u, nil)
			return u
		}, "", "must not have a fragment"},
		{"dot segments", func() string {
			u := base + "/a/../client.json"
			e.register(u, nil)
			return u
		}, "", "must not have . or .. path segments"},
		{"plain http to a public host", func() string {
			u := "http://agent.example/client.json"
			e.register(u, nil)
			return u
		}, "", "must start with https://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := c.setup()
			e.refused(u, c.redirect, c.want)
		})
	}
	if n := e.host.Hits("/unregistered.json"); n != 0 {
		t.Fatalf("an unregistered URL was fetched %d times", n)
	}
	if e.fetches("cimd", "too_large") == 0 || e.fetches("cimd", "redirect") == 0 || e.fetches("cimd", "invalid") == 0 {
		t.Fatal("fetch failures not counted by outcome")
	}
	if !strings.Contains(e.logs.String(), "rule=invalid_document") {
		t.Fatal("refusal rule not logged")
	}
	if strings.Contains(e.logs.String(), "s3cr3t") {
		t.Fatal("a document body reached the log")
	}
}

// A failed fetch and an invalid document are never cached, even when the
// answer says it may be: once the host answers with a valid document, the
// client links.
func TestCIMDFailureNotCached(t *testing.T) {
	for _, c := range []struct {
		name, outcome, want string
		put                 func(e *cimdEnv, path string)
	}{
		{"unavailable", "status", "did not answer with the document", func(e *cimdEnv, path string) {
			e.host.Put(path, http.StatusServiceUnavailable, `{}`, "Cache-Control", "max-age=3600")
		}},
		{"invalid document", "invalid", "it has no client_name", func(e *cimdEnv, path string) {
			e.publish(path, map[string]any{"client_name": nil}, "Cache-Control", "public, max-age=3600")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCIMDEnv(t, "registered", "")
			u := e.host.Base + "/flaky.json"
			c.put(e, "/flaky.json")
			e.register(u, nil)
			e.refused(u, "", c.want)
			e.publish("/flaky.json", nil, "Cache-Control", "max-age=3600")
			e.link(u, "openid")
			if n := e.host.Hits("/flaky.json"); n != 2 {
				t.Fatalf("fetched %d times, want 2", n)
			}
			if e.fetches("cimd", c.outcome) != 1 || e.fetches("cimd", "ok") != 1 {
				t.Fatalf("metrics: %s %v ok %v", c.outcome, e.fetches("cimd", c.outcome), e.fetches("cimd", "ok"))
			}
		})
	}
}

// Policy open: an unregistered valid document links, its consent page says
// Linkslot has not verified it, it is recorded as open-linked, and it gets
// at most LINKSLOT_CIMD_OPEN_SCOPES.
func TestCIMDPolicyOpen(t *testing.T) {
	e := newCIMDEnv(t, "open", "bookings:read")
	u := e.publish("/open.json", map[string]any{"redirect_uris": []string{"http://127.0.0.1/callback"}})
	c := e.oauth(u, "", "openid")
	resp := e.get(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), e.account.ID)
	var v consent.ConsentView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !v.URLClient || !v.Unverified || !v.AllLoopback || v.ClientHost != strings.TrimPrefix(e.host.Base, "https://") || v.ClientName != "Example Agent" {
		t.Fatalf("consent view %+v", v)
	}
	if !slices.Equal(scopeNames(v), []string{"openid", "bookings:read"}) {
		t.Fatalf("granted %v, want openid bookings:read", scopeNames(v))
	}
	tok := e.link(u, "openid")
	if got := tok.Extra("scope"); !strings.Contains(got.(string), "bookings:read") || strings.Contains(got.(string), "bookings:write") {
		t.Fatalf("scope %v", got)
	}
	rec, err := e.s.GetClient(context.Background(), u)
	if err != nil || !rec.OpenLinked || rec.Name != "Example Agent" {
		t.Fatalf("record %+v, %v", rec, err)
	}
	// Beyond the open scopes: invalid_scope, back to the (listed) redirect.
	c = e.oauth(u, "", "openid", "bookings:write")
	back := e.authorize(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), e.account.ID, "allow")
	if back.Query().Get("error") != "invalid_scope" {
		t.Fatalf("bookings:write under open scopes bookings:read: %v", back)
	}
	// An invalid document is refused in open mode too.
	bad := e.publish("/open-bad.json", map[string]any{"client_name": ""})
	e.refused(bad, "", "it has no client_name")
}

// An open-linked client is not registered: under the registered policy it
// is refused.
func TestCIMDOpenLinkedNeedsOpenPolicy(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	u := e.publish("/was-open.json", nil)
	e.register(u, func(c *store.Client) { c.OpenLinked = true })
	e.refused(u, "", "no administrator of this Linkslot server has registered")
}

// Policy off: not advertised, every URL client refused, registered or not.
func TestCIMDPolicyOff(t *testing.T) {
	e := newCIMDEnv(t, "off", "")
	u := e.publish("/off.json", nil)
	e.register(u, nil)
	e.refused(u, "", "does not accept apps that identify themselves by a web address")
	resp, err := http.Get(e.issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if _, ok := md["client_id_metadata_document_supported"]; ok {
		t.Fatal("policy off still advertises client_id_metadata_document_supported")
	}
	if e.host.Hits("/off.json") != 0 {
		t.Fatal("policy off fetched the document")
	}
}

// A pinned document is used instead of fetching.
func TestCIMDPinnedDocument(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	u := e.host.Base + "/pinned.json" // nothing is served there
	e.register(u, func(c *store.Client) { c.PinnedDocument = doc(u, nil) })
	e.link(u, "openid")
	if e.host.Hits("/pinned.json") != 0 {
		t.Fatal("a pinned document was fetched")
	}
}

func scopeNames(v consent.ConsentView) []string {
	var out []string
	for _, s := range v.Scopes {
		out = append(out, s.Name)
	}
	return out
}
