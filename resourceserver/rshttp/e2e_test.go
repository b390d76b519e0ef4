package rshttp_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const (
	demoPassword = "linkslot-demo-e2e"
	uiCookie     = "e2e_account"
	uiCSRF       = "e2e-csrf-token"
)

// autoUI is a consent.UI for tests: a cookie names the signed-in account and
// the consent "page" is its view as JSON, which the test's browser approves.
type autoUI struct{ s store.Store }

var _ consent.AuthorizeUI = autoUI{}

// CurrentSignIn: the person signed in just now.
func (u autoUI) CurrentSignIn(r *http.Request) (consent.SignIn, bool) {
	a, ok := u.CurrentAccount(r)
	return consent.SignIn{Account: a, AuthTime: store.SystemClock()}, ok
}
func (u autoUI) ReauthRedirect(w http.ResponseWriter, r *http.Request, next string) {
	u.LoginRedirect(w, r, next)
}

// RenderRedirectRefusal: the refusal as a plain error page.
func (u autoUI) RenderRedirectRefusal(w http.ResponseWriter, r *http.Request, status int, v consent.RedirectRefusal) {
	u.RenderError(w, r, status, v.Title(), v.Message())
}

func (u autoUI) CurrentAccount(r *http.Request) (store.Account, bool) {
	c, err := r.Cookie(uiCookie)
	if err != nil {
		return store.Account{}, false
	}
	a, err := u.s.GetAccount(r.Context(), c.Value)
	return a, err == nil
}
func (u autoUI) LoginRedirect(w http.ResponseWriter, r *http.Request, next string) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusFound)
}
func (u autoUI) CSRFToken(http.ResponseWriter, *http.Request) string { return uiCSRF }
func (u autoUI) VerifyCSRF(r *http.Request) bool                     { return r.PostFormValue(consent.CSRFField) == uiCSRF }
func (u autoUI) RenderConsent(w http.ResponseWriter, r *http.Request, v consent.ConsentView) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Test-Page", "consent")
	_ = json.NewEncoder(w).Encode(v)
}
func (u autoUI) RenderError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.WriteHeader(status)
	_, _ = io.WriteString(w, title+": "+message)
}

// system is the real authorization server and the resource server on one
// database.
type system struct {
	t        *testing.T
	ctx      context.Context
	store    *sqlstore.Store
	as, rs   *httptest.Server
	issuer   string // the authorization server's URL
	resource string
	account  store.Account
	// http is the client for the servers (it trusts their test CA).
	http *http.Client

	// rsAhead moves the resource server's clock ahead of the wall clock
	// (tests of what it honours within its cache period).
	rsAhead atomic.Int64

	mu        sync.Mutex
	consents  int      // consent pages approved
	authScope []string // scope parameter of each authorization request
	lastView  consent.ConsentView
}

// eachBackend runs fn on SQLite and PostgreSQL (skipped without one, except
// under CI).
func eachBackend(t *testing.T, fn func(t *testing.T, s *sqlstore.Store)) {
	sqltest.Each(t, fn)
}

func newSystemWith(t *testing.T, realUI bool) *system {
	return newSystemOn(t, realUI, sqltest.SQLite(t))
}

// newSystemOn builds the system on s; realUI mounts the real consent pages
// (sign-in with the demo password, HTML consent) instead of autoUI.
func newSystemOn(t *testing.T, realUI bool, s *sqlstore.Store) *system {
	return buildSystem(t, systemOpts{realUI: realUI, store: s})
}

// systemOpts shape buildSystem.
type systemOpts struct {
	realUI bool
	store  *sqlstore.Store
	// host, when set, serves both servers over HTTPS under its CA (as
	// https://localhost:PORT), and the authorization server fetches client
	// ID metadata documents from it, trusting that CA; sys.http trusts it
	// too.
	host *testkit.DocHost
	// cimdPolicy is LINKSLOT_CIMD_POLICY (default registered).
	cimdPolicy string
	// dcrPolicy is LINKSLOT_DCR_POLICY (default off).
	dcrPolicy string
}

func buildSystem(t *testing.T, o systemOpts) *system {
	t.Helper()
	ctx := context.Background()
	s := o.store
	sys := &system{t: t, ctx: ctx, store: s, http: http.DefaultClient}
	now := store.SystemClock()
	if _, err := demo.Load(ctx, s, demo.Data{Password: demoPassword, Hash: password.Hash,
		Catalogs: booking.DemoCatalogs(now)}); err != nil {
		t.Fatal(err)
	}
	// A client whose default grant is read only, to exercise step-up.
	ro := demo.Client(now)
	ro.ID, ro.Name, ro.DefaultScopes = "readonly-mcp-client", "Read-first client", []string{"bookings:read"}
	if err := s.CreateClient(ctx, ro); err != nil {
		t.Fatal(err)
	}
	var err error
	if sys.account, err = s.GetAccountByEmail(ctx, demo.AccountEmail); err != nil {
		t.Fatal(err)
	}

	var asH, rsH http.Handler
	asFn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asH.ServeHTTP(w, r) })
	rsFn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rsH.ServeHTTP(w, r) })
	var fetch authhttp.FetchOptions
	if o.host != nil {
		sys.as = o.host.CA.StartTLS(t, asFn, "localhost", "127.0.0.1")
		sys.rs = o.host.CA.StartTLS(t, rsFn, "localhost", "127.0.0.1")
		sys.http = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.host.CA.Pool()}}}
		fetch.RootCAs = o.host.CA.Pool()
	} else {
		sys.as = httptest.NewServer(asFn)
		t.Cleanup(sys.as.Close)
		sys.rs = httptest.NewServer(rsFn)
		t.Cleanup(sys.rs.Close)
	}
	sys.issuer = localhostURL(sys.as.URL, o.host != nil)
	sys.resource = localhostURL(sys.rs.URL, o.host != nil) + "/mcp"
	cfg := config.Config{Issuer: sys.issuer, Resource: sys.resource, SecretKey: []byte(testSecret),
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour, CIMDPolicy: o.cimdPolicy, DCRPolicy: o.dcrPolicy}
	var ui consent.AuthorizeUI = autoUI{s}
	if o.realUI {
		ui = nil // the consent UI's pages
	}
	if asH, _, err = authhttp.Wire(ctx, authhttp.Deps{Store: s, DCRStore: s, Config: cfg, Logger: testLogger(t), Fetch: fetch}, authhttp.Wiring{UI: ui}); err != nil {
		t.Fatal(err)
	}
	if rsH, err = rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: testLogger(t), HTTPClient: sys.http,
		Clock: func() time.Time { return store.SystemClock().Add(time.Duration(sys.rsAhead.Load())) }}); err != nil {
		t.Fatal(err)
	}
	return sys
}

// localhostURL names an HTTPS test server https://localhost:PORT, the name
// its certificate and a browser would use.
func localhostURL(u string, tls bool) string {
	if !tls {
		return u
	}
	return strings.Replace(u, "127.0.0.1", "localhost", 1)
}

// fetcher plays the person's browser: signed in, it opens the authorization
// URL, approves the consent page by posting its form, and returns what the
// authorization server sent to the redirect URI.
func (sys *system) fetcher(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, _ := url.Parse(args.URL)
	sys.mu.Lock()
	sys.authScope = append(sys.authScope, u.Query().Get("scope"))
	sys.mu.Unlock()
	if u.Query().Get("code_challenge_method") != "S256" || u.Query().Get("code_challenge") == "" {
		return nil, fmt.Errorf("authorization request without PKCE S256: %s", args.URL)
	}
	browser := &http.Client{Transport: sys.http.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(req *http.Request) (*http.Response, error) {
		req.AddCookie(&http.Cookie{Name: uiCookie, Value: sys.account.ID})
		return browser.Do(req)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	resp, err := do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Test-Page") == "consent" {
		var v consent.ConsentView
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			return nil, err
		}
		sys.mu.Lock()
		sys.lastView = v
		sys.mu.Unlock()
		form := v.Params
		form.Set("decision", "allow")
		form.Set(consent.CSRFField, v.CSRFToken)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, sys.issuer+v.Action, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if resp, err = do(req); err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		sys.mu.Lock()
		sys.consents++
		sys.mu.Unlock()
	}
	if resp.StatusCode/100 != 3 {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("authorize: %d %s", resp.StatusCode, b)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	q := loc.Query()
	if q.Get("error") != "" {
		return nil, fmt.Errorf("authorize error %s: %s", q.Get("error"), q.Get("error_description"))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

func (sys *system) connect(clientID string) *mcp.ClientSession {
	sys.t.Helper()
	return sys.connectWith(&auth.AuthorizationCodeHandlerConfig{PreregisteredClient: &oauthex.ClientCredentials{ClientID: clientID}})
}

// connectWith links the MCP Go SDK client registered as cfg says (its
// browser and HTTP client are the system's, and so is its redirect unless
// cfg names one) and connects.
func (sys *system) connectWith(cfg *auth.AuthorizationCodeHandlerConfig) *mcp.ClientSession {
	sys.t.Helper()
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = "http://127.0.0.1:53682/callback"
	}
	cfg.AuthorizationCodeFetcher, cfg.Client = sys.fetcher, sys.http
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		sys.t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-e2e", Version: "1"}, nil)
	cs, err := c.Connect(sys.ctx, &mcp.StreamableClientTransport{Endpoint: sys.resource, OAuthHandler: h, HTTPClient: sys.http,
		DisableStandaloneSSE: true}, nil)
	if err != nil {
		sys.t.Fatalf("connect through the OAuth flow: %v", err)
	}
	sys.t.Cleanup(func() { cs.Close() })
	return cs
}

func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkAnswer(t, cs, name, res)
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	json.Unmarshal(b, &m)
	if res.IsError {
		t.Fatalf("%s answered an error: %s", name, b)
	}
	return m
}

func TestEndToEndWithTheRealAuthorizationServer(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) { endToEnd(t, newSystemOn(t, false, s)) })
}

func endToEnd(t *testing.T, sys *system) {
	// Discovery starts from a bare 401.
	resp, err := http.Post(sys.resource, "application/json", strings.NewReader(toolsList))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("unauthenticated: %d", resp.StatusCode)
	}

	cs := sys.connect(demo.ClientID) // 401 → PRM → AS metadata → PKCE → consent → token
	if sys.consents != 1 || len(sys.authScope) != 1 || sys.authScope[0] != "openid" {
		t.Fatalf("authorization requests %v, consents %d; want one for scope openid", sys.authScope, sys.consents)
	}
	tl, err := cs.ListTools(sys.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	requireReadTools(t, tl.Tools)

	found := callOK(t, cs, "search_bookable_business", map[string]any{"query": "haircut", "city": "New York"})
	results, _ := found["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no barbers found: %v", found)
	}
	callOK(t, cs, "check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers"})
	loc, _ := time.LoadLocation("America/New_York")
	day := booking.DemoBarberDay(time.Now(), 3)
	av := callOK(t, cs, "check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers",
		"service_reference": "svc-classic-haircut", "local_date": day})
	if av["timezone"] != "America/New_York" {
		t.Fatalf("availability: %v", av)
	}

	// Give the person a booking, then read it back through the tools.
	b := bookFor(t, sys.store, sys.account.ID, loc)
	mine := callOK(t, cs, "search_my_bookings", map[string]any{"status": "upcoming"})
	if rs, _ := mine["results"].([]any); len(rs) != 1 {
		t.Fatalf("my bookings: %v", mine)
	}
	got := callOK(t, cs, "get_my_booking", map[string]any{"booking_reference": b.Reference})
	if bk, _ := got["booking"].(map[string]any); bk["booking_reference"] != b.Reference || bk["grant"] == "" || bk["grant"] == nil {
		t.Fatalf("get_my_booking: %v", got)
	}
	callOK(t, cs, "check_my_booking_availability", map[string]any{"booking_reference": b.Reference, "local_date": day})
}

// TestDemoClientOAuthCallbackRedirects links the demo client through the
// redirects the MCP Inspector and mcp-remote use by default: the Inspector's
// http://127.0.0.1:6276/oauth/callback and mcp-remote's
// http://localhost:PORT/oauth/callback (docs/reference.md §8). The Node
// tests (TestInspectorCLIDefaultCallback, TestMCPRemote) run the clients
// themselves; this holds the redirects where Node is absent.
func TestDemoClientOAuthCallbackRedirects(t *testing.T) {
	sys := newSystemWith(t, false)
	for i, redirect := range []string{"http://127.0.0.1:6276/oauth/callback", "http://localhost:41234/oauth/callback"} {
		cs := sys.connectWith(&auth.AuthorizationCodeHandlerConfig{RedirectURL: redirect,
			PreregisteredClient: &oauthex.ClientCredentials{ClientID: demo.ClientID}})
		if len(sys.authScope) != i+1 {
			t.Fatalf("%s: %d authorizations, want %d", redirect, len(sys.authScope), i+1)
		}
		callOK(t, cs, "search_bookable_business", map[string]any{"query": "haircut"})
	}
}

func bookFor(t *testing.T, s store.Store, accountID string, loc *time.Location) store.Booking {
	t.Helper()
	ctx := context.Background()
	cat, err := s.LoadCatalog(ctx, "biz-brightcut-barbers")
	if err != nil {
		t.Fatal(err)
	}
	svc, staff := cat.Services[0], cat.Staff[0]
	for _, x := range cat.Services {
		if x.Reference == "svc-classic-haircut" {
			svc = x
		}
	}
	for _, x := range cat.Staff {
		if x.Reference == "stf-marcus-reid" {
			staff = x
		}
	}
	d := time.Now().In(loc).AddDate(0, 0, 5)
	start := time.Date(d.Year(), d.Month(), d.Day(), 11, 0, 0, 0, loc).UTC()
	end := start.Add(time.Duration(svc.DurationMinutes) * time.Minute)
	now := store.SystemClock()
	b := store.Booking{ID: store.NewID("bkg"), Reference: "LSE2E" + strings.ToUpper(store.RandomString(3)), BusinessID: cat.Business.ID,
		ServiceID: svc.ID, StaffID: staff.ID, AccountID: accountID, StartsAt: start, EndsAt: end, BlockStart: start,
		BlockEnd: end.Add(time.Duration(svc.BufferAfterMinutes) * time.Minute), Status: store.BookingConfirmed, Version: 1,
		PaymentState: store.PaymentNone, PriceCents: svc.PriceCents, Currency: svc.Currency, CreatedAt: now, UpdatedAt: now}
	if err := s.InsertBooking(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEndToEndStepUp(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) { stepUp(t, newSystemOn(t, false, s)) })
}

func stepUp(t *testing.T, sys *system) {
	cs := sys.connect("readonly-mcp-client")
	callOK(t, cs, "search_bookable_business", map[string]any{"query": "massage"})
	if len(sys.authScope) != 1 {
		t.Fatalf("reading needed %d authorizations", len(sys.authScope))
	}
	link, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, "readonly-mcp-client")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(link.Scopes, " "), "bookings:write") {
		t.Fatalf("the first link already grants write: %v", link.Scopes)
	}

	// A mutation answers 403 insufficient_scope; the SDK client steps up
	// through the authorization server and retries.
	_, err = cs.CallTool(sys.ctx, &mcp.CallToolParams{Name: "create_my_booking", Arguments: map[string]any{}})
	if err != nil && !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("after step-up the call failed with a non-protocol error: %v", err)
	}
	if len(sys.authScope) != 2 || !strings.Contains(sys.authScope[1], "bookings:write") || sys.consents != 2 {
		t.Fatalf("step-up authorizations %q, consents %d", sys.authScope, sys.consents)
	}
	link, err = sys.store.GetActiveLink(sys.ctx, sys.account.ID, "readonly-mcp-client")
	if err != nil || !strings.Contains(strings.Join(link.Scopes, " "), "bookings:write") {
		t.Fatalf("link after step-up: %v %v", link.Scopes, err)
	}
	// Reading still works with the stepped-up token.
	callOK(t, cs, "search_my_bookings", nil)
}
