package authhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

const (
	resource   = "http://127.0.0.1:8081/mcp"
	testCookie = "test_account"
	testCSRF   = "test-csrf-token"
	publicID   = "demo-mcp-client"
	confID     = "conf-client"
	otherID    = "other-client"
)

// testUI is a minimal consent.AuthorizeUI: a cookie names the signed-in
// account (another, testAuthTime, when it signed in: Unix seconds, else
// just now), the consent "page" is the view as JSON, the CSRF token is
// fixed.
type testUI struct{ s store.Store }

var _ consent.AuthorizeUI = testUI{}

const testAuthTime = "test_auth_time"

func (u testUI) CurrentSignIn(r *http.Request) (consent.SignIn, bool) {
	a, ok := u.CurrentAccount(r)
	at := store.SystemClock()
	if c, err := r.Cookie(testAuthTime); err == nil {
		n, _ := strconv.ParseInt(c.Value, 10, 64)
		at = time.Unix(n, 0).UTC()
	}
	return consent.SignIn{Account: a, AuthTime: at}, ok
}

func (u testUI) ReauthRedirect(w http.ResponseWriter, r *http.Request, next string) {
	http.Redirect(w, r, "/login?reauth=1&next="+url.QueryEscape(next), http.StatusFound)
}

// RenderRedirectRefusal: the refusal as a plain error page.
func (u testUI) RenderRedirectRefusal(w http.ResponseWriter, r *http.Request, status int, v consent.RedirectRefusal) {
	u.RenderError(w, r, status, v.Title(), v.Message())
}

func (u testUI) CurrentAccount(r *http.Request) (store.Account, bool) {
	c, err := r.Cookie(testCookie)
	if err != nil {
		return store.Account{}, false
	}
	a, err := u.s.GetAccount(r.Context(), c.Value)
	return a, err == nil && !a.Disabled
}

func (u testUI) LoginRedirect(w http.ResponseWriter, r *http.Request, next string) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusFound)
}

func (u testUI) CSRFToken(http.ResponseWriter, *http.Request) string { return testCSRF }

func (u testUI) VerifyCSRF(r *http.Request) bool {
	return r.PostFormValue(consent.CSRFField) == testCSRF
}

func (u testUI) RenderConsent(w http.ResponseWriter, r *http.Request, v consent.ConsentView) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Test-Page", "consent")
	_ = json.NewEncoder(w).Encode(v)
}

func (u testUI) RenderError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.Header().Set("X-Test-Page", "error")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, title+": "+message)
}

// syncBuffer collects log output from concurrent handlers.
type syncBuffer = testkit.SyncBuffer

type env struct {
	t          testing.TB
	s          store.Store
	srv        *httptest.Server
	issuer     string
	account    store.Account
	account2   store.Account
	confSecret string
	logs       *syncBuffer
	offset     atomic.Int64 // clock offset, ns
	redirect   string       // the loopback callback, with a port of its own
}

func (e *env) now() time.Time { return store.UTC(time.Now().Add(time.Duration(e.offset.Load()))) }

func newEnv(t testing.TB, s store.Store) *env { t.Helper(); return newEnvWith(t, s, nil) }

// newEnvWith is newEnv with the server's dependencies adjusted by mod
// before it is built.
func newEnvWith(t testing.TB, s store.Store, mod func(*authhttp.Deps)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, s: s, logs: &syncBuffer{}, redirect: "http://127.0.0.1:53682/callback"}
	var h http.Handler
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(e.srv.Close)
	e.issuer = e.srv.URL
	now := store.SystemClock()
	for i, a := range []*store.Account{&e.account, &e.account2} {
		*a = store.Account{ID: store.NewID("acct"), Email: []string{"demo", "someone"}[i] + "-" + store.RandomString(3) + "@example.com",
			PasswordHash: "unused", CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}
		if err := s.CreateAccount(ctx, *a); err != nil {
			t.Fatal(err)
		}
	}
	e.confSecret = clients.GenerateSecret()
	hash, _ := clients.HashSecret(e.confSecret)
	for _, c := range []store.Client{
		{ID: publicID, Name: "Demo MCP client", Public: true,
			RedirectURIs:  []string{"http://127.0.0.1/callback", "http://localhost/callback"},
			AllowedScopes: []string{"openid", "profile", "email", "offline_access", "bookings:read", "bookings:write"},
			DefaultScopes: []string{"bookings:read", "bookings:write"}, GrantTypes: []string{"authorization_code", "refresh_token"}},
		{ID: confID, Name: "Confidential", SecretHash: hash, RedirectURIs: []string{"https://app.example/cb"},
			AllowedScopes: []string{"openid", "bookings:read"}, DefaultScopes: []string{"bookings:read"},
			GrantTypes: []string{"authorization_code", "refresh_token"}},
		{ID: otherID, Name: "Other", Public: true, RedirectURIs: []string{"http://127.0.0.1/callback"},
			AllowedScopes: []string{"openid", "bookings:read"}, DefaultScopes: []string{"bookings:read"},
			GrantTypes: []string{"authorization_code", "refresh_token"}},
	} {
		c.CreatedAt, c.UpdatedAt = now, now
		if err := clients.Validate(c); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateClient(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Config{Issuer: e.issuer, Resource: resource, SecretKey: []byte("test-secret-key-test-secret-key-0123"),
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	feeds, err := feed.New(s, cfg.SecretKey, cfg.Issuer, e.now)
	if err != nil {
		t.Fatal(err)
	}
	deps := authhttp.Deps{Store: s, Config: cfg, UI: testUI{s}, Feeds: feeds, Logger: log, Clock: e.now}
	if mod != nil {
		mod(&deps)
	}
	h, err = authhttp.New(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// browser is an HTTP client that stops at every redirect.
func (e *env) browser() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (e *env) oauth(clientID, secret string, scopes ...string) *oauth2.Config {
	c := &oauth2.Config{ClientID: clientID, ClientSecret: secret, Scopes: scopes, RedirectURL: e.redirect,
		Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token"}}
	if secret == "" {
		c.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	} else {
		c.RedirectURL = "https://app.example/cb"
		c.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	return c
}

// get performs a GET as account (empty: signed out).
func (e *env) get(rawURL string, account string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
	return e.do(req, account)
}

func (e *env) postForm(rawURL string, form url.Values, account string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, rawURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(req, account)
}

// do sends req from the browser as account (empty: signed out).
func (e *env) do(req *http.Request, account string) *http.Response {
	e.t.Helper()
	if account != "" {
		req.AddCookie(&http.Cookie{Name: testCookie, Value: account})
	}
	resp, err := e.browser().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// authorize runs the front channel as account, approving consent when asked
// (decision "allow" or "deny"), and returns the final redirect to the client.
func (e *env) authorize(authURL, account, decision string) *url.URL {
	e.t.Helper()
	resp := e.get(authURL, account)
	defer resp.Body.Close()
	if resp.Header.Get("X-Test-Page") == "consent" {
		var v consent.ConsentView
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			e.t.Fatal(err)
		}
		form := v.Params
		form.Set("decision", decision)
		form.Set(consent.CSRFField, v.CSRFToken)
		resp2 := e.postForm(e.issuer+v.Action, form, account)
		defer resp2.Body.Close()
		resp = resp2
	}
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("authorize: status %d, body %s", resp.StatusCode, body)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// code runs the front channel and returns the code.
func (e *env) code(c *oauth2.Config, account string, opts ...oauth2.AuthCodeOption) string {
	e.t.Helper()
	u := e.authorize(c.AuthCodeURL("state-1234567890", opts...), account, "allow")
	q := u.Query()
	if q.Get("error") != "" {
		e.t.Fatalf("authorize error %s: %s", q.Get("error"), q.Get("error_description"))
	}
	if q.Get("state") != "state-1234567890" || q.Get("iss") != e.issuer {
		e.t.Fatalf("callback state/iss: %v", q)
	}
	return q.Get("code")
}

// tokenForm posts to the token-ish endpoint and decodes the JSON answer.
func (e *env) tokenForm(path string, form url.Values, basic ...string) (int, map[string]any, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.issuer+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	body, _ := io.ReadAll(resp.Body)
	if len(body) > 0 {
		if err := json.Unmarshal(body, &m); err != nil {
			e.t.Fatalf("%s: non-JSON answer %d %q", path, resp.StatusCode, body)
		}
	}
	return resp.StatusCode, m, resp.Header
}

func (e *env) introspect(token string) map[string]any {
	e.t.Helper()
	st, m, _ := e.tokenForm("/oauth2/introspect", url.Values{"token": {token}}, confID, e.confSecret)
	if st != http.StatusOK {
		e.t.Fatalf("introspect: %d %v", st, m)
	}
	return m
}
