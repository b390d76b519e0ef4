package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/crypto/argon2"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const (
	benchSecret   = "bench-secret-key-bench-secret-key-0123456789"
	benchPassword = "bench-password"
)

// system is the authorization server and two resource servers (auth on,
// auth off) in process, on httptest listeners, on one store.
type system struct {
	backend string
	dsn     string // the database's URL
	store   *sqlstore.Store
	as      *httptest.Server
	rs      *httptest.Server // authentication on
	rsOpen  *httptest.Server // authentication off
	// rsNoop is rs with the booking engine replaced by a no-op
	// (testkit.NoopDomain): the same server, the same tokens (its resource
	// is rs's), answering in no time.
	rsNoop   *httptest.Server
	resource string
	accounts []store.Account
	watch    *watcher // watcher's, once opened
	close    []func()
}

// appSystem is the application_name of a system's store connections on
// PostgreSQL, which the watcher (conns.go) finds them by.
const appSystem = "bench-system"

// watcher is the system's watcher (conns.go), opened on first use and
// closed with the system.
func (s *system) watcher() *watcher {
	if s.watch == nil {
		w, err := newWatcher(s.dsn)
		if err != nil {
			fatal(err)
		}
		s.watch = w
		s.close = append(s.close, w.Close)
	}
	return s.watch
}

// pool is the system's store pool, for its watcher to watch.
func (s *system) pool() *pool {
	return &pool{w: s.watcher(), db: s.store.SQL(), app: appSystem}
}

func (s *system) Close() {
	for i := len(s.close) - 1; i >= 0; i-- {
		s.close[i]()
	}
}

var discard = slog.New(slog.DiscardHandler)

// openStore opens a fresh database: a SQLite file in dir, or a new
// PostgreSQL database created next to pgURL's.
func openStore(ctx context.Context, backend, dir, pgURL string, maxConns int) (*sqlstore.Store, string, func(), error) {
	var raw string
	cleanup := func() {}
	switch backend {
	case "sqlite":
		raw = "sqlite://" + filepath.Join(dir, fmt.Sprintf("bench-%s.db", randHex(4)))
	case "postgres":
		admin, err := sql.Open("pgx", pgURL)
		if err != nil {
			return nil, "", nil, err
		}
		name := "bench_" + randHex(6)
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			admin.Close()
			return nil, "", nil, err
		}
		u, _ := url.Parse(pgURL)
		u.Path = "/" + name
		raw = withAppName(u.String(), appSystem)
		cleanup = func() {
			admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			admin.Close()
		}
	default:
		return nil, "", nil, fmt.Errorf("unknown backend %q", backend)
	}
	s, err := sqlstore.Open(ctx, raw, sqlstore.Options{MaxOpenConns: maxConns})
	if err != nil {
		cleanup()
		return nil, "", nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		s.Close()
		cleanup()
		return nil, "", nil, err
	}
	return s, raw, func() { s.Close(); cleanup() }, nil
}

// cheapHash is an argon2id hash with the smallest cost; password.Verify
// reads the parameters back, so sign-in runs the production code.
func cheapHash(pw string) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(pw), salt, 1, 8, 1, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=8,t=1,p=1$%s$%s", argon2.Version, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

func newSystem(ctx context.Context, backend, dir, pgURL string, maxConns, accounts int) (*system, error) {
	st, dsn, cleanup, err := openStore(ctx, backend, dir, pgURL, maxConns)
	if err != nil {
		return nil, err
	}
	sys := &system{backend: backend, dsn: dsn, store: st}
	sys.close = append(sys.close, cleanup)
	now := store.SystemClock()
	if _, err := demo.Load(ctx, st, demo.Data{Password: benchPassword, Hash: cheapHash, Catalogs: booking.DemoCatalogs(now)}); err != nil {
		sys.Close()
		return nil, err
	}
	hash, _ := cheapHash(benchPassword)
	for i := 0; i < accounts; i++ {
		a := store.Account{ID: store.NewID("acc"), Email: fmt.Sprintf("bench-%d@example.com", i), PasswordHash: hash, CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}
		if err := st.CreateAccount(ctx, a); err != nil {
			sys.Close()
			return nil, err
		}
		sys.accounts = append(sys.accounts, a)
	}
	var asH, rsH, openH http.Handler
	sys.as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asH.ServeHTTP(w, r) }))
	sys.rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rsH.ServeHTTP(w, r) }))
	sys.rsOpen = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { openH.ServeHTTP(w, r) }))
	var noopH http.Handler
	sys.rsNoop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { noopH.ServeHTTP(w, r) }))
	sys.close = append(sys.close, sys.as.Close, sys.rs.Close, sys.rsOpen.Close, sys.rsNoop.Close)
	sys.resource = sys.rs.URL + "/mcp"
	cfg := config.Config{Issuer: sys.as.URL, Resource: sys.resource, SecretKey: []byte(benchSecret),
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour}
	if asH, _, err = authhttp.Wire(ctx, authhttp.Deps{Store: st, Config: cfg, Logger: discard}, authhttp.Wiring{}); err != nil {
		sys.Close()
		return nil, err
	}
	if rsH, err = rshttp.New(ctx, rshttp.Deps{Store: st, Config: cfg, Logger: discard, NoRateLimits: true}); err != nil {
		sys.Close()
		return nil, err
	}
	if noopH, err = rshttp.New(ctx, rshttp.Deps{Store: st, Config: cfg, Logger: discard, NoRateLimits: true, Domain: testkit.NoopDomain{}}); err != nil {
		sys.Close()
		return nil, err
	}
	openCfg := cfg
	openCfg.Resource = sys.rsOpen.URL + "/mcp"
	demoAcct, err := st.GetAccountByEmail(ctx, "demo@example.com")
	if err != nil {
		sys.Close()
		return nil, err
	}
	open := anyToken{rshttp.Identity{AccountID: demoAcct.ID, ClientID: "demo-mcp-client", LinkID: "link_benchmark",
		Scopes: []string{"openid", "bookings:read", "bookings:write"}}}
	if openH, err = rshttp.New(ctx, rshttp.Deps{Store: st, Config: openCfg, Logger: discard, NoRateLimits: true, Auth: open}); err != nil {
		sys.Close()
		return nil, err
	}
	return sys, nil
}

// person is one signed-in person's browser and their agent's tokens.
type person struct {
	browser *http.Client
	api     *http.Client
	oauth   *oauth2.Config
	access  string
	refresh string
}

var benchTransport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	MaxIdleConns:        2000,
	MaxIdleConnsPerHost: 500,
	IdleConnTimeout:     30 * time.Second,
}

func readAll(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return string(b)
}

// signIn links a person: authorize → sign-in form → consent → code → token.
// Consent is then remembered, so later authorizations redirect at once.
func (sys *system) signIn(ctx context.Context, acct store.Account) (*person, error) {
	p := &person{api: &http.Client{Transport: benchTransport, Timeout: 30 * time.Second}}
	p.oauth = &oauth2.Config{ClientID: demo.ClientID, RedirectURL: "http://127.0.0.1:41234/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: sys.as.URL + "/oauth2/authorize", TokenURL: sys.as.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	p.browser = testkit.NewBrowser(p.oauth.RedirectURL, benchTransport, 30*time.Second)
	tok, err := testkit.LinkThroughPages(ctx, testkit.LinkRequest{OAuth: p.oauth, Browser: p.browser, HTTP: p.api,
		Email: acct.Email, Password: benchPassword, State: "state-" + randHex(6)})
	if err != nil {
		return nil, err
	}
	p.access, p.refresh = tok.AccessToken, tok.RefreshToken
	return p, nil
}

// codeFlow is one authorization for the signed-in person with remembered
// consent: authorize → 302 with code → token with the PKCE verifier.
func (p *person) codeFlow(ctx context.Context) error {
	v := oauth2.GenerateVerifier()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.oauth.AuthCodeURL("state-"+randHex(6), oauth2.S256ChallengeOption(v)), nil)
	resp, err := p.browser.Do(req)
	if err != nil {
		return err
	}
	readAll(resp)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
		return fmt.Errorf("authorize answered %d", resp.StatusCode)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {p.oauth.RedirectURL},
		"client_id": {demo.ClientID}, "code_verifier": {v}}
	return p.token(ctx, form, nil)
}

// rotate rotates the person's own refresh chain once.
func (p *person) rotate(ctx context.Context) error {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {p.refresh}, "client_id": {demo.ClientID}}
	return p.token(ctx, form, func(access, refresh string) { p.access, p.refresh = access, refresh })
}

func (p *person) token(ctx context.Context, form url.Values, keep func(access, refresh string)) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.oauth.Endpoint.TokenURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.api.Do(req)
	if err != nil {
		return err
	}
	body := readAll(resp)
	if resp.StatusCode != 200 {
		return fmt.Errorf("token endpoint answered %d", resp.StatusCode)
	}
	var t struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal([]byte(body), &t); err != nil || t.AccessToken == "" {
		return fmt.Errorf("token answer without access token")
	}
	if keep != nil {
		keep(t.AccessToken, t.RefreshToken)
	}
	return nil
}

// toolCall posts one tools/call and reports whether it succeeded; result
// is the structuredContent, of an error answer too.
func toolCall(ctx context.Context, hc *http.Client, endpoint, token, tool string, args any) (map[string]any, error) {
	raw, err := toolCallFrom(ctx, hc, endpoint, token, tool, args, "")
	if raw == nil {
		return nil, err
	}
	// An error answer keeps its content too: callers read its code.
	var out map[string]any
	if jerr := json.Unmarshal(raw, &out); jerr != nil && err == nil {
		return nil, fmt.Errorf("%s: structuredContent is not an object", tool)
	}
	return out, err
}

// toolCheck is toolCall for the read workloads, which use nothing of the
// answer: it checks that the answer is well-formed JSON-RPC and not an
// error, as toolCall does, without building maps of what it carries:
// decoding a day's open times (11 KB) into maps was a sixth of the
// process's CPU in the availability workloads, charged to the server
// being measured, which shares the machine with its load generator.
func toolCheck(ctx context.Context, hc *http.Client, endpoint, token, tool string, args any) error {
	_, err := toolCallFrom(ctx, hc, endpoint, token, tool, args, "")
	return err
}

// toolCallFrom posts one tools/call with X-Forwarded-For set to xff (when
// not ""), a client behind a trusted proxy, and answers the
// structuredContent as sent.
func toolCallFrom(ctx context.Context, hc *http.Client, endpoint, token, tool string, args any, xff string) (json.RawMessage, error) {
	req, err := testkit.ToolCallRequest(ctx, endpoint, token, tool, args)
	if err != nil {
		return nil, err
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%s answered HTTP %d", tool, resp.StatusCode)
	}
	var rpc struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil || rpc.Error != nil {
		return nil, fmt.Errorf("%s: malformed or protocol error", tool)
	}
	if rpc.Result.IsError {
		var e struct {
			Error struct {
				Code any `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(rpc.Result.StructuredContent, &e)
		return rpc.Result.StructuredContent, fmt.Errorf("%s: %v", tool, e.Error.Code)
	}
	return rpc.Result.StructuredContent, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// limitServers are two more resource servers on sys's store and resource
// URI (so the same tokens verify), behind 127.0.0.1 as a trusted proxy:
// one keeps the rate limits in process, the other shares them through the
// database (store.RateWindows). Their limits are far above what the load
// reaches, so every call pays for its limit checks and none is refused: the
// difference is what sharing the limits costs.
func (sys *system) limitServers(ctx context.Context) (local, shared *httptest.Server, err error) {
	cfg := config.Config{Issuer: sys.as.URL, Resource: sys.resource, SecretKey: []byte(benchSecret),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	high := rshttp.Limit{PerSecond: 1e6, Burst: 2e6}
	shareable, _ := app.SharedRateWindows(sys.store)
	for _, localLimits := range []bool{true, false} {
		d := rshttp.Deps{Store: sys.store, Config: cfg, Logger: discard, PerAddress: &high, PerLink: &high}
		if !localLimits {
			d.RateWindows = shareable
		}
		h, err := rshttp.New(ctx, d)
		if err != nil {
			return nil, nil, err
		}
		srv := httptest.NewServer(h)
		sys.close = append(sys.close, srv.Close)
		if localLimits {
			local = srv
		} else {
			shared = srv
		}
	}
	return local, shared, nil
}

// anyToken is the authentication-off baseline of the availability
// workload: every well-formed bearer token speaks for the demo account,
// with no signature check and no store read.
type anyToken struct{ id rshttp.Identity }

func (a anyToken) Verify(context.Context, string) (rshttp.Identity, error) { return a.id, nil }
