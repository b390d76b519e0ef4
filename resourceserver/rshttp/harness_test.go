package rshttp_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"github.com/linkslot/linkslot/internal/metrics"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// epoch is the pinned "now" of every test: a Monday morning in UTC.
var epoch = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

const testSecret = "0123456789abcdef0123456789abcdef-test-secret"

// testClock is a pinned clock that tests can advance.
type testClock struct{ off atomic.Int64 }

func (c *testClock) Now() time.Time          { return store.UTC(epoch.Add(time.Duration(c.off.Load()))) }
func (c *testClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// env is one resource server on httptest with a stand-in issuer that
// publishes the JWKS of real (database) signing keys, a demo account, the
// demo client and a link.
type env struct {
	t        testing.TB
	ctx      context.Context
	store    *sqlstore.Store
	clock    *testClock
	keys     *keys.Manager
	issuer   *httptest.Server
	rs       *httptest.Server
	resource string
	account  store.Account
	other    store.Account
	client   store.Client
	link     store.Link
	jwksHits atomic.Int64
	deps     rshttp.Deps // what the server was built with
}

type envOpts struct {
	authDisabled bool // the benchmarks' baseline: anyToken instead of tokencheck
	noLimits     bool
	perLink      *rshttp.Limit
	domain       tools.Domain // optional: replaces the booking engine
	linkScopes   []string
	store        *sqlstore.Store // default: a fresh SQLite store
	serve        store.Store     // what the server uses (default: store), e.g. store wrapped in storetest.Faults
	resource     string          // default: the listener's own http://127.0.0.1:port/mcp
	metrics      *metrics.Metrics
	timeout      time.Duration // Config.RequestTimeout (0: the default)
	production   bool          // Config.Production (LINKSLOT_ENV=production)
	// notifications replace the server's own (e-mail to a test SMTP
	// server, webhooks under a test CA).
	notifications *app.Notifications
	callbacks     *rshttp.Limit // the callback requests' limit (nil: the default)
	offerMinutes  int
	waitlistEvery time.Duration // 0: never (tests pass offers on themselves)
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, ctx: ctx, store: o.store, clock: &testClock{}}
	if e.store == nil {
		e.store = sqltest.SQLite(t)
	}
	now := e.clock.Now()
	e.keys = keys.NewManager(e.store, []byte(testSecret), store.KeyPurposeToken, e.clock.Now)
	if err := e.keys.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	e.issuer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks.json" {
			http.NotFound(w, r)
			return
		}
		e.jwksHits.Add(1)
		b, err := e.keys.PublicJWKS(r.Context())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(e.issuer.Close)

	e.account = e.mustAccount("demo@example.com")
	e.other = e.mustAccount("someone-else@example.com")
	e.client = store.Client{ID: "demo-mcp-client", Name: "Demo", Public: true,
		RedirectURIs:  []string{"http://127.0.0.1/callback"},
		AllowedScopes: []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite},
		DefaultScopes: []string{scope.BookingsRead, scope.BookingsWrite},
		GrantTypes:    []string{"authorization_code", "refresh_token"}, CreatedAt: now, UpdatedAt: now}
	if err := e.store.CreateClient(ctx, e.client); err != nil {
		t.Fatal(err)
	}
	ls := o.linkScopes
	if ls == nil {
		ls = []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}
	}
	var err error
	if e.link, err = e.store.UpsertLink(ctx, e.account.ID, e.client.ID, ls, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range booking.DemoCatalogs(now) {
		if _, err := e.store.PutCatalog(ctx, c); err != nil {
			t.Fatalf("demo catalog %s: %v", c.Business.Reference, err)
		}
	}

	e.rs = httptest.NewUnstartedServer(nil)
	e.resource = "http://" + e.rs.Listener.Addr().String() + "/mcp"
	if o.resource != "" {
		e.resource = o.resource
	}
	var serve store.Store = e.store
	if o.serve != nil {
		serve = o.serve
	}
	deps := rshttp.Deps{
		Store: serve,
		Config: config.Config{Issuer: e.issuer.URL, Resource: e.resource, SecretKey: []byte(testSecret),
			AllowedOrigins: []string{"https://app.example.com"}, RequestTimeout: o.timeout,
			Production: o.production},
		Logger:       testLogger(t),
		Clock:        e.clock.Now,
		NoRateLimits: o.noLimits,
		PerLink:      o.perLink,
		Metrics:      o.metrics,

		Notifications: o.notifications,
		Callbacks:     o.callbacks,
		OfferMinutes:  o.offerMinutes,
		WaitlistEvery: o.waitlistEvery,
	}
	if deps.WaitlistEvery == 0 {
		deps.WaitlistEvery = -1
	}
	e.deps = deps
	if o.domain != nil {
		deps.Domain = o.domain
	}
	if o.authDisabled {
		deps.Auth = anyToken{rshttp.Identity{AccountID: e.account.ID, ClientID: e.client.ID, LinkID: e.link.ID,
			Scopes: []string{"openid", "bookings:read", "bookings:write"}}}
	}
	h, err := rshttp.New(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	e.rs.Config.Handler = h
	e.rs.Start()
	t.Cleanup(e.rs.Close)
	return e
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("LINKSLOT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

func (e *env) mustAccount(email string) store.Account {
	e.t.Helper()
	now := e.clock.Now()
	a := store.Account{ID: store.NewID("acct"), Email: email, PasswordHash: "x", CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}
	if err := e.store.CreateAccount(e.ctx, a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// claims of a minted access token; zero fields get the defaults.
type tokenClaims struct {
	Iss      string   `json:"iss"`
	Sub      string   `json:"sub"`
	Aud      []string `json:"aud"`
	Exp      int64    `json:"exp"`
	Iat      int64    `json:"iat"`
	JTI      string   `json:"jti"`
	ClientID string   `json:"client_id"`
	Scope    string   `json:"scope"`
	LinkID   string   `json:"link_id"`
}

func (e *env) defaultClaims() tokenClaims {
	now := e.clock.Now()
	return tokenClaims{Iss: e.issuer.URL, Sub: e.account.ID, Aud: []string{e.resource},
		Exp: now.Add(15 * time.Minute).Unix(), Iat: now.Unix(), JTI: store.NewID("jti"),
		ClientID: e.client.ID, Scope: "openid bookings:read bookings:write", LinkID: e.link.ID}
}

// token mints an access token with the current database signing key.
func (e *env) token(edit func(*tokenClaims)) string {
	e.t.Helper()
	sk, err := e.keys.SigningKey(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.sign(sk, "at+jwt", edit)
}

func (e *env) sign(sk jose.SigningKey, typ string, edit func(*tokenClaims)) string {
	e.t.Helper()
	c := e.defaultClaims()
	if edit != nil {
		edit(&c)
	}
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	jws, err := signer.Sign(b)
	if err != nil {
		e.t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		e.t.Fatal(err)
	}
	e.storeSession(raw, c)
	return raw
}

// storeSession records the access-token session the authorization server
// would have stored for a token it issued (the resource server refuses a
// token without one): keyed by the hash of the JWT's signature segment.
func (e *env) storeSession(raw string, c tokenClaims) {
	e.t.Helper()
	now := e.clock.Now()
	exp := time.Unix(c.Exp, 0)
	if !exp.After(now) {
		exp = now.Add(time.Minute)
	}
	ts := store.TokenSession{Kind: store.KindAccessToken, SignatureHash: store.HashSecret(raw[strings.LastIndexByte(raw, '.')+1:]),
		RequestID: store.NewID("req"), ClientID: c.ClientID, AccountID: c.Sub, LinkID: c.LinkID,
		Active: true, Request: []byte("{}"), ExpiresAt: exp, CreatedAt: now}
	if err := e.store.CreateTokenSession(e.ctx, ts); err != nil {
		e.t.Fatal(err)
	}
}

// foreignKey is an ES256 key no JWKS publishes.
func foreignKey(t testing.TB, kid string) jose.SigningKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: "ES256"}}
}

// rpc posts one JSON-RPC body to /mcp.
func (e *env) rpc(token, body string, hdr map[string]string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.resource, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func readBody(t testing.TB, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

func toolCall(name string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// bearerTransport adds a fixed bearer token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// session connects the MCP Go SDK client with a fixed token.
func (e *env) session(token, version string) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.resource, HTTPClient: &http.Client{Transport: bearerTransport{token: token}},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := c.Connect(e.ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatalf("connect (%s): %v", version, err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func prettyJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	var out bytes.Buffer
	out.Write(b)
	return out.String()
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b), nil
	}
	return out.String(), nil
}

// anyToken is the benchmarks' authentication-off baseline: every
// well-formed bearer token speaks for the test link, with no signature
// check and no store read.
type anyToken struct{ id rshttp.Identity }

func (a anyToken) Verify(context.Context, string) (rshttp.Identity, error) { return a.id, nil }
