package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// Client addresses of the scenario: every one a loopback address of its
// own, so that the front tells them apart as an ingress tells people apart.
const (
	frontIP   = "127.0.0.2" // the only trusted proxy
	clientA   = "127.0.0.3" // hits the limits
	clientB   = "127.0.0.4" // behind the same front, must not feel A
	clientC   = "127.0.0.5" // forges X-Forwarded-For through the front
	spooferIP = "127.0.0.1" // reaches the servers directly, untrusted
)

// TestBehindProxy runs two authorization servers and three resource
// servers on one PostgreSQL behind a reverse proxy (httputil.ReverseProxy,
// round-robin, appending X-Forwarded-For) that is the only trusted proxy
// (LINKSLOT_TRUSTED_PROXIES), with the issuer and resource URLs its own:
//
//   - one client is held to the documented per-address limit (200 requests
//     in any 2-second window) across all three resource servers — not three
//     times it;
//   - its 30 failed sign-ins, spread over both authorization servers, start
//     its wait, while a second client behind the same proxy signs in and
//     links at once;
//   - forged X-Forwarded-For and Forwarded headers change nothing, whether
//     sent directly by an untrusted peer or through the proxy;
//   - logs and audit entries carry the client's address.
func TestBehindProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("the cluster starts PostgreSQL and five server processes")
	}
	asFront, rsFront := NewFront(t, frontIP), NewFront(t, frontIP)
	adminToken := "admin-" + randHex(16)
	c := Start(t, Options{Issuer: asFront.URL, Resource: rsFront.URL + "/mcp",
		ExtraEnv: []string{"LINKSLOT_TRUSTED_PROXIES=" + frontIP + "/32", "LINKSLOT_ADMIN_TOKEN=" + adminToken}})
	asFront.SetBackends(c.AS)
	rsFront.SetBackends(c.RS)
	ctx := context.Background()
	limit, window := 2*int(rshttp.DefaultPerAddress.PerSecond), 2 // Burst in Burst/PerSecond seconds
	if rshttp.DefaultPerAddress.Burst != limit {
		t.Fatalf("the documented per-address limit changed (%+v): update this test and docs/reference.md §4", rshttp.DefaultPerAddress)
	}

	// unauth sends n unauthenticated POST /mcp with client, on width
	// connections, and counts the answers by status. The per-address limit
	// runs before authentication: 401 is an allowed request, 429 a limited
	// one.
	unauth := func(client *http.Client, endpoint string, n int, header func(i int, h http.Header)) (allowed, limited int, seconds int) {
		var ok, lim atomic.Int64
		var other sync.Map
		first, last := time.Now(), time.Now()
		var mu sync.Mutex
		parallel(n, 12, func(i int) {
			req, _ := testkit.ToolCallRequest(ctx, endpoint, "", "search_bookable_business", map[string]any{"query": "x"})
			if header != nil {
				header(i, req.Header)
			}
			resp, err := client.Do(req)
			if err != nil {
				other.Store(err.Error(), true)
				return
			}
			readAll(resp)
			mu.Lock()
			last = time.Now()
			mu.Unlock()
			switch resp.StatusCode {
			case http.StatusUnauthorized:
				ok.Add(1)
			case http.StatusTooManyRequests:
				lim.Add(1)
				if resp.Header.Get("Retry-After") == "" {
					other.Store("429 without Retry-After", true)
				}
			default:
				other.Store(fmt.Sprint("status ", resp.StatusCode), true)
			}
		})
		other.Range(func(k, _ any) bool { t.Errorf("unexpected answer: %v", k); return true })
		return int(ok.Load()), int(lim.Load()), int(last.Unix()-first.Unix()) + 1
	}
	// bound is the most a shared sliding window of `window` whole seconds
	// allows over `seconds` distinct seconds.
	bound := func(seconds int) int { return limit * ((seconds + window - 1) / window) }
	nextSecond := func() {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	}

	t.Run("PerAddressLimitAcrossReplicas", func(t *testing.T) {
		nextSecond()
		a := ClientFrom(clientA, nil)
		n := 3 * limit
		allowed, limited, secs := unauth(a, rsFront.URL+"/mcp", n, nil)
		t.Logf("client A: %d requests through the front over %d s, round-robin on %d resource servers: %d allowed, %d answered 429 (documented limit %d per %d s)",
			n, secs, len(c.RS), allowed, limited, limit, window)
		if allowed < limit || allowed > bound(secs) {
			t.Fatalf("client A got %d requests through in %d s; the shared limit allows %d..%d (with per-replica limits it would be up to %d)",
				allowed, secs, limit, bound(secs), len(c.RS)*limit)
		}
		if allowed+limited != n {
			t.Fatalf("%d answers for %d requests", allowed+limited, n)
		}
		// B, behind the same front, still gets through at once.
		b := ClientFrom(clientB, nil)
		if ok, lim, _ := unauth(b, rsFront.URL+"/mcp", 6, nil); ok != 6 || lim != 0 {
			t.Fatalf("client B behind the same proxy: %d allowed, %d limited; want all 6 allowed", ok, lim)
		}
		// Every resource server saw A's real address (access log).
		for _, rs := range c.RS {
			if !strings.Contains(rs.Log(), `"client_addr":"`+clientA+`"`) {
				t.Errorf("%s logged no request from %s", rs.Name, clientA)
			}
			if strings.Contains(rs.Log(), `"status":429`) == false {
				t.Errorf("%s answered no 429: the limit was not applied on every replica", rs.Name)
			}
		}
	})

	t.Run("ForgedHeadersIgnored", func(t *testing.T) {
		// An untrusted peer that names a new address in every request is
		// still one address: it is limited like A. If the headers counted,
		// no request would be limited.
		forge := func(i int, h http.Header) {
			h.Set("X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", i/250, i%250+1))
			h.Set("Forwarded", fmt.Sprintf("for=203.0.%d.%d", i/250, i%250+1))
		}
		nextSecond()
		direct := ClientFrom(spooferIP, nil)
		n := 2 * limit
		allowed, limited, secs := unauth(direct, c.RS[0].Base+"/mcp", n, forge)
		t.Logf("untrusted peer %s, a forged address in every request, straight to %s: %d allowed, %d limited in %d s", spooferIP, c.RS[0].Name, allowed, limited, secs)
		if allowed > bound(secs) || limited == 0 {
			t.Fatalf("forged headers from an untrusted peer changed its address: %d allowed, %d limited", allowed, limited)
		}
		// The same forgery through the front: the front appends C's real
		// address, the right-most untrusted one, so C is one client too.
		nextSecond()
		cl := ClientFrom(clientC, nil)
		allowed, limited, secs = unauth(cl, rsFront.URL+"/mcp", n, func(i int, h http.Header) {
			h.Set("X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", i/250, i%250+1))
		})
		t.Logf("client C through the front, a forged X-Forwarded-For in every request: %d allowed, %d limited in %d s", allowed, limited, secs)
		if allowed > bound(secs) || limited == 0 {
			t.Fatalf("a forged X-Forwarded-For through the proxy changed the address: %d allowed, %d limited", allowed, limited)
		}
		// B is still unaffected by all of it: a forged header naming B
		// counted nothing against B.
		nextSecond()
		unauth(direct, c.RS[1].Base+"/mcp", limit+10, func(_ int, h http.Header) { h.Set("X-Forwarded-For", clientB) })
		if ok, lim, _ := unauth(ClientFrom(clientB, nil), rsFront.URL+"/mcp", 6, nil); ok != 6 || lim != 0 {
			t.Fatalf("forged headers naming B limited B: %d allowed, %d limited", ok, lim)
		}
	})

	t.Run("SignInThrottlePerClient", func(t *testing.T) {
		// Accounts with cheap hashes: a failure for an unknown address
		// would verify against the production-cost dummy hash.
		accts := c.CreateAccounts(t, "proxy", 31)
		failLogin := func(browser *http.Client, email, password string) int {
			resp, err := browser.Get(asFront.URL + "/login")
			if err != nil {
				t.Fatal(err)
			}
			form := testkit.HiddenFields(readAll(resp))
			form.Set("email", email)
			form.Set("password", password)
			resp, err = browser.PostForm(asFront.URL+"/login", form)
			if err != nil {
				t.Fatal(err)
			}
			readAll(resp)
			return resp.StatusCode
		}
		jar, _ := cookiejar.New(nil)
		a := ClientFrom(clientA, jar)
		// 30 failures on 30 different accounts (no account limit is
		// reached), alternating between the two authorization servers.
		for i := range 30 {
			if code := failLogin(a, accts[i+1].Email, "wrong password here"); code != http.StatusUnauthorized {
				t.Fatalf("failure %d answered %d, want 401", i, code)
			}
		}
		// The 31st attempt waits, on either replica, even with the right
		// password: the per-address limit (30) holds across both.
		for i := range len(c.AS) {
			if code := failLogin(a, accts[0].Email, DemoPassword); code != http.StatusTooManyRequests {
				t.Fatalf("attempt %d after 30 failures across %d replicas answered %d, want 429", 31+i, len(c.AS), code)
			}
		}
		// B behind the same front links at once, through both servers.
		oc := &oauth2.Config{ClientID: demo.ClientID, RedirectURL: "http://127.0.0.1:41234/callback", Scopes: []string{"openid"},
			Endpoint: oauth2.Endpoint{AuthURL: asFront.URL + "/oauth2/authorize", TokenURL: asFront.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
		bHTTP := ClientFrom(clientB, nil)
		browser := testkit.NewBrowser(oc.RedirectURL, bHTTP.Transport, 30*time.Second)
		tok, err := testkit.LinkThroughPages(ctx, testkit.LinkRequest{OAuth: oc, Browser: browser, HTTP: bHTTP,
			Email: accts[0].Email, Password: DemoPassword, Resource: c.Resource})
		if err != nil {
			t.Fatalf("client B could not sign in behind the proxy A is throttled on: %v", err)
		}
		req, _ := testkit.ToolCallRequest(ctx, rsFront.URL+"/mcp", tok.AccessToken, "search_bookable_business", map[string]any{"query": "a"})
		resp, err := bHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := readAll(resp); resp.StatusCode != 200 || strings.Contains(body, `"isError":true`) {
			t.Fatalf("B's tool call through the front: %d %.300s", resp.StatusCode, body)
		}
		if lines := c.Grep(`sign-in throttled"`, 10); len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), `"client_addr":"`+clientA+`"`) {
			t.Errorf("the throttled sign-ins are not logged with A's address: %q", lines)
		}
	})

	t.Run("AuditEntryCarriesClientAddress", func(t *testing.T) {
		api := ClientFrom(clientC, nil)
		body := `{"id":"proxy-audit-client","name":"Proxy audit","public":true,"redirect_uris":["http://127.0.0.1/callback"],` +
			`"allowed_scopes":["openid","bookings:read"],"default_scopes":["bookings:read"],"grant_types":["authorization_code","refresh_token"]}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, asFront.URL+"/admin/api/clients", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", "6.6.6.6") // forged, to the left of what the front appends
		resp, err := api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if b := readAll(resp); resp.StatusCode/100 != 2 {
			t.Fatalf("create client through the front: %d %s", resp.StatusCode, b)
		}
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, asFront.URL+"/admin/api/audit?"+url.Values{"limit": {"5"}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err = api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw := readAll(resp)
		var page struct {
			Events []struct {
				Action, Target string
				ClientAddr     string `json:"client_addr"`
			} `json:"events"`
		}
		if err := json.Unmarshal([]byte(raw), &page); err != nil {
			t.Fatalf("audit page: %v: %.300s", err, raw)
		}
		for _, e := range page.Events {
			if e.Target == "proxy-audit-client" {
				if e.ClientAddr != clientC {
					t.Fatalf("audit entry from %q, want %s (the front's client)", e.ClientAddr, clientC)
				}
				return
			}
		}
		t.Fatalf("no audit entry for the new client: %.500s", raw)
	})
}
