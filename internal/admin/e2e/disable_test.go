package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// offsetClock is the resource server's clock: real time plus an offset the
// test moves forward, so "within 5 seconds" is checked without waiting.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return store.UTC(time.Now().Add(c.off))
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// linked is a person whose agent holds an access token for the resource
// server, with the admin API and the resource server's clock at hand.
type linked struct {
	store *sqlstore.Store
	clock *offsetClock
	email string
	pw    string
	api   func(method, path, body string) int
	call  func() int // tools/list with the agent's access token: the status
}

// newLinked starts an authorization server with the admin API and a
// resource server on one SQLite database, registers agent-x through the
// API, and links it to a person through the sign-in and consent pages.
func newLinked(t *testing.T) *linked {
	t.Helper()
	s := sqltest.SQLite(t)
	bg := context.Background()
	svc, err := admin.New(admin.Config{Store: s})
	must(t, err, "admin service")
	l := &linked{store: s, email: "person@example.com", pw: "Person-Passphrase-123"}
	_, err = svc.CreateUser(bg, admin.Actor{ID: admin.ActorCLI}, l.email, l.pw, false)
	must(t, err, "create person")

	var authH, rsH http.Handler
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { authH.ServeHTTP(w, r) }))
	t.Cleanup(as.Close)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rsH.ServeHTTP(w, r) }))
	t.Cleanup(rs.Close)
	resourceURL := rs.URL + "/mcp"
	secret := []byte("e2e-disable-secret-key-e2e-disable-secret")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Config{Issuer: as.URL, Resource: resourceURL, SecretKey: secret, RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour}
	auth, _, err := authhttp.Wire(bg, authhttp.Deps{Store: s, Logger: log, Config: cfg}, authhttp.Wiring{})
	must(t, err, "auth server")
	const adminToken = "e2e-admin-token-0123456789abcdef"
	mux := http.NewServeMux()
	mux.Handle("/", auth)
	mux.Handle(adminapi.Prefix, adminapi.NewAPI(svc, adminapi.NewTokenAuth(adminToken), log))
	authH = mux
	l.clock = &offsetClock{}
	rsH, err = rshttp.New(bg, rshttp.Deps{Store: s, Config: cfg, Logger: log, Clock: l.clock.now, NoRateLimits: true})
	must(t, err, "resource server")

	l.api = func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, as.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		must(t, err, method+" "+path)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := l.api("POST", "/admin/api/clients", `{"id":"agent-x","name":"Agent X","public":true,
		"redirect_uris":["http://127.0.0.1/callback"],"allowed_scopes":["openid","bookings:read"],"default_scopes":["bookings:read"]}`); st != 201 {
		t.Fatalf("register through the API: %d", st)
	}

	// The person signs in and approves; the client exchanges the code.
	conf := &oauth2.Config{ClientID: "agent-x", RedirectURL: "http://127.0.0.1:45678/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: as.URL + "/oauth2/authorize", TokenURL: as.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := testkit.LinkThroughPages(bg, testkit.LinkRequest{OAuth: conf, Email: l.email, Password: l.pw,
		State: "state-0123456789", Resource: resourceURL})
	must(t, err, "link through the sign-in and consent pages")

	l.call = func() int { t.Helper(); return toolsList(t, resourceURL, tok.AccessToken) }
	if st := l.call(); st != 200 {
		t.Fatalf("token refused before any change: %d", st)
	}
	return l
}

// toolsList calls tools/list at the resource server with an access token
// and returns the HTTP status; a 200 must carry a JSON-RPC result.
func toolsList(t *testing.T, resourceURL, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", resourceURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	must(t, err, "call the resource server")
	defer resp.Body.Close()
	if resp.StatusCode == 200 {
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &m) != nil || m["result"] == nil {
			t.Fatalf("tools/list: %s", b)
		}
	}
	return resp.StatusCode
}

// TestDisabledClientRefusedByResourceServer: a client registered through
// the admin API gets an access token; after the admin API disables it, the
// resource server refuses that token once its ≤ 5 s cache has expired
// (the resource server's clock is moved 5 s ahead instead of sleeping).
func TestDisabledClientRefusedByResourceServer(t *testing.T) {
	l := newLinked(t)
	if st := l.api("POST", "/admin/api/clients/agent-x/disable", ""); st != 200 {
		t.Fatalf("disable through the API: %d", st)
	}
	l.clock.advance(5 * time.Second)
	if st := l.call(); st != http.StatusUnauthorized {
		t.Fatalf("5 s after the disable the resource server answered %d, want 401", st)
	}
	// Enabling it again lets the same token through (the link is intact).
	if st := l.api("POST", "/admin/api/clients/agent-x/enable", ""); st != 200 {
		t.Fatalf("enable: %d", st)
	}
	l.clock.advance(5 * time.Second)
	if st := l.call(); st != 200 {
		t.Errorf("after enabling again: %d", st)
	}
}

// TestDisabledAccountRefusedByResourceServer: after the admin API disables
// the person's account, the resource server refuses the agent's access
// token within 5 s, the person cannot sign in, and enabling the account
// does not bring the revoked link back.
func TestDisabledAccountRefusedByResourceServer(t *testing.T) {
	l := newLinked(t)
	if st := l.api("POST", "/admin/api/users/"+l.email+"/disable", ""); st != 200 {
		t.Fatalf("disable through the API: %d", st)
	}
	l.clock.advance(5 * time.Second)
	if st := l.call(); st != http.StatusUnauthorized {
		t.Fatalf("5 s after disabling the account the resource server answered %d, want 401", st)
	}
	acct, err := l.store.GetAccountByEmail(context.Background(), l.email)
	must(t, err, "account")
	links, _ := l.store.ListAccountLinks(context.Background(), acct.ID)
	if !acct.Disabled || len(links) != 1 || links[0].Status != store.LinkRevoked {
		t.Fatalf("after disable: %+v %+v", acct, links)
	}
	if st := l.api("POST", "/admin/api/users/"+l.email+"/enable", ""); st != 200 {
		t.Fatalf("enable: %d", st)
	}
	l.clock.advance(5 * time.Second)
	if st := l.call(); st != http.StatusUnauthorized {
		t.Errorf("after enabling the account the revoked link's token answered %d, want 401", st)
	}
}
