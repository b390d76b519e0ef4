package consentui_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/store"
)

// refusedPage opens the authorization request of clientID with redirect on
// the real server and pages, following no redirect, and returns the page's
// HTML after checking it is the 400 error page on the server itself.
func (sy *system) refusedPage(clientID, redirect string) string {
	sy.t.Helper()
	c := &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: sy.url + "/oauth2/authorize", TokenURL: sy.url + "/oauth2/token"}}
	u := c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(u)
	must(sy.t, err, "authorize")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Cache-Control") != "no-store" {
		sy.t.Fatalf("%s → %q: %d Location %q %s", clientID, redirect, resp.StatusCode, resp.Header.Get("Location"), resp.Header)
	}
	return string(body)
}

// TestRedirectRefusalPage: the page for a refused redirect address, as
// the real pages show it. For the demo client (an address its
// registration lacks) it names the address refused and lists those allowed with the any-port rule in words; for an
// administrator's confidential client it lists nothing (a dynamically
// registered one's are listed) and asks for the
// address to be registered; an address made to mislead is escaped, cleaned
// and cut.
func TestRedirectRefusalPage(t *testing.T) {
	sy := newSystem(t)
	ctx := context.Background()

	page := sy.refusedPage("demo-mcp-client", "http://127.0.0.1:6276/oauth/done")
	for _, want := range []string{
		"<h1>Invalid redirect address</h1>",
		`Demo MCP client asked Linkslot to send you back to <code class="refused">http://127.0.0.1:6276/oauth/done</code>, which is not an address it may use. Nothing was shared.`,
		"<li><code>http://127.0.0.1/callback</code> (any port)</li>",
		"<li><code>http://localhost/callback</code> (any port)</li>",
		"<li><code>http://127.0.0.1/oauth/callback</code> (any port)</li>",
		"<li><code>http://localhost/oauth/callback</code> (any port)</li>",
		"An address on this computer (http://127.0.0.1, http://[::1] or http://localhost) matches with any port; the rest of it, path included, must match exactly.",
		"If you are the app&#39;s developer, send people back to one of these addresses.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("demo client: the page lacks %q:\n%s", want, page)
		}
	}

	hash, err := clients.HashSecret(clients.GenerateSecret())
	must(t, err, "hash")
	now := store.SystemClock()
	must(t, sy.store.CreateClient(ctx, store.Client{ID: "partner-app", Name: "Partner App", SecretHash: hash,
		RedirectURIs: []string{"https://partner.example/oauth/done"}, AllowedScopes: []string{"openid"},
		GrantTypes: []string{"authorization_code"}, CreatedAt: now, UpdatedAt: now}), "confidential client")
	page = sy.refusedPage("partner-app", "https://partner.example/oauth/other")
	for _, want := range []string{
		`Partner App asked Linkslot to send you back to <code class="refused">https://partner.example/oauth/other</code>`,
		"Ask the app&#39;s developer to register it: an administrator of this Linkslot server adds the address to the app&#39;s registration.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("confidential client: the page lacks %q:\n%s", want, page)
		}
	}
	for _, lack := range []string{"partner.example/oauth/done", "addresses it may use", "any port"} {
		if strings.Contains(page, lack) {
			t.Errorf("confidential client: the page shows %q:\n%s", lack, page)
		}
	}

	// A client that registered itself chose its addresses in a
	// registration anyone could make: they are listed.
	must(t, sy.store.CreateClient(ctx, store.Client{ID: clients.DynamicPrefix + "a1b2c3d4e5f6a7b8c9d0", Name: "Cursor", Public: true,
		RedirectURIs: []string{"cursor://anysphere.cursor-mcp/oauth/callback"}, AllowedScopes: []string{"openid"},
		GrantTypes: []string{"authorization_code"}, CreatedAt: now, UpdatedAt: now}), "dynamic client")
	page = sy.refusedPage(clients.DynamicPrefix+"a1b2c3d4e5f6a7b8c9d0", "cursor://anysphere.cursor-mcp/other")
	for _, want := range []string{
		`<code class="refused">cursor://anysphere.cursor-mcp/other</code>`,
		"<li><code>cursor://anysphere.cursor-mcp/oauth/callback</code></li>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("dynamic client: the page lacks %q:\n%s", want, page)
		}
	}

	// An address made to mislead: markup, a right-to-left override, and
	// a length that would push the rest of the page away.
	evil := "https://evil.example/<script>alert(1)</script>\u202egnp.x/" + strings.Repeat("a", 400)
	page = sy.refusedPage("demo-mcp-client", evil)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "\u202e") || strings.Contains(page, strings.Repeat("a", 200)) {
		t.Errorf("the refused address is shown raw or whole:\n%s", page)
	}
	if !strings.Contains(page, "https://evil.example/&lt;script&gt;alert(1)&lt;/script&gt;\ufffdgnp.x/aaaa") || !strings.Contains(page, "a…</code>") {
		t.Errorf("the refused address is not shown escaped, cleaned and cut:\n%s", page)
	}

	// No redirect_uri from a client with several: said so, and listed.
	q := url.Values{"client_id": {"demo-mcp-client"}, "response_type": {"code"}, "state": {"state-1234567890"}}
	resp, err := http.Get(sy.url + "/oauth2/authorize?" + q.Encode())
	must(t, err, "authorize without a redirect")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "did not say where to send you back") ||
		!strings.Contains(string(body), "<li><code>http://127.0.0.1/callback</code> (any port)</li>") {
		t.Errorf("no redirect_uri: %d\n%s", resp.StatusCode, body)
	}
}
