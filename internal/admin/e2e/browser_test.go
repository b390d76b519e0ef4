package e2e_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	consentui "github.com/linkslot/linkslot/consent-ui"
	adminui "github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const resource = "http://127.0.0.1:8081/mcp"

// adminSecret is the servers' LINKSLOT_SECRET_KEY.
var adminSecret = []byte("e2e-admin-secret-key-e2e-admin-secret-key")

// newAdminServer serves the authorization server with the admin pages and
// the admin API (an administrator's session) on one test server.
func newAdminServer(t *testing.T, s store.Store, svc *admin.Service) (*httptest.Server, *consentui.UI) {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	auth, ui, err := authhttp.Wire(context.Background(), authhttp.Deps{Store: s, Logger: log, Config: config.Config{Issuer: srv.URL,
		Resource: resource, SecretKey: adminSecret, RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour}}, authhttp.Wiring{})
	must(t, err, "auth server")
	pages, err := adminui.New(svc, ui, log)
	must(t, err, "admin pages")
	mux := http.NewServeMux()
	mux.Handle("/", auth)
	mux.Handle("/admin", pages)
	mux.Handle("/admin/", pages)
	mux.Handle(adminapi.Prefix, adminapi.NewAPI(svc, adminapi.NewSessionAuth(ui), log))
	h = mux
	return srv, ui
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func field(label string) string {
	return fmt.Sprintf(`//*[@id=//label[normalize-space()=%q]/@for]`, label)
}

func button(text string) string { return fmt.Sprintf(`//button[normalize-space()=%q]`, text) }

func heading(text string) string { return fmt.Sprintf(`//h1[contains(normalize-space(), %q)]`, text) }

func typeInto(t *testing.T, ctx context.Context, label, value string) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(field(label)), chromedp.SendKeys(field(label), value)), "type into "+label)
}

func press(t *testing.T, ctx context.Context, text string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(button(text)))
	must(t, err, "press "+text)
	return resp.Status
}

func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"), chromedp.NodeVisible))
	must(t, err, "read page")
	return s
}

// TestAdminRegistersClientThatAuthorizes: an administrator registers a
// public client in Chromium; the client completes a code flow with PKCE
// through the consent page; after the administrator disables it, its
// refresh token and a new authorization are refused.
func TestAdminRegistersClientThatAuthorizes(t *testing.T) {
	ctx := chromium.New(t)
	s := sqltest.SQLite(t)
	bg := context.Background()
	svc, err := admin.New(admin.Config{Store: s})
	must(t, err, "admin service")
	const email, pw = "root@example.com", "Admin-Browser-Passphrase-7"
	_, err = svc.CreateUser(bg, admin.Actor{ID: admin.ActorCLI}, email, pw, true)
	must(t, err, "create admin")

	srv, _ := newAdminServer(t, s, svc)

	got := make(chan url.Values, 4)
	cl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Query()
		fmt.Fprint(w, "<!doctype html><title>Client</title><h1>Client received the answer</h1>")
	}))
	defer cl.Close()

	// Sign in on the way to the admin pages, then register the client.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/clients/new"), chromedp.WaitVisible(heading("Sign in"))), "admin → sign in")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign in: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Register a client"))), "new client form")
	typeInto(t, ctx, "Client ID", "browser-made-client")
	typeInto(t, ctx, "Name shown to people", "Browser Made Client")
	typeInto(t, ctx, "Redirect URIs, one per line", "http://127.0.0.1/callback")
	if st := press(t, ctx, "Register client"); st != 200 {
		t.Fatalf("register: %d: %s", st, bodyText(t, ctx))
	}
	if text := bodyText(t, ctx); !strings.Contains(text, "Client registered") || !strings.Contains(text, "public client") {
		t.Fatalf("after register: %s", text)
	}
	c, err := s.GetClient(bg, "browser-made-client")
	if err != nil || !c.Public {
		t.Fatalf("stored client: %+v %v", c, err)
	}

	// The new client authorizes with PKCE.
	conf := &oauth2.Config{ClientID: "browser-made-client", RedirectURL: cl.URL + "/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth2/authorize", TokenURL: srv.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	must(t, chromedp.Do(ctx, chromedp.Navigate(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(heading("wants to connect"))), "consent page")
	if !strings.Contains(bodyText(t, ctx), "Browser Made Client") {
		t.Errorf("consent page does not name the client")
	}
	press(t, ctx, "Allow")
	var code string
	select {
	case q := <-got:
		code = q.Get("code")
		if code == "" || q.Get("state") != "state-0123456789" {
			t.Fatalf("client got %v", q)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the client's redirect URI was never reached")
	}
	tok, err := conf.Exchange(bg, code, oauth2.VerifierOption(verifier))
	must(t, err, "exchange the code")
	if tok.AccessToken == "" {
		t.Fatal("no access token")
	}

	// The administrator disables the client on its page.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/clients/browser-made-client"),
		chromedp.WaitVisible(button("Disable client"))), "client page")
	if st := press(t, ctx, "Disable client"); st != 200 {
		t.Fatalf("disable: %d", st)
	}
	if !strings.Contains(bodyText(t, ctx), "The client is disabled") {
		t.Fatal("no confirmation of the disable")
	}
	if c, _ := s.GetClient(bg, "browser-made-client"); !c.Disabled {
		t.Fatal("client not disabled")
	}
	// Its token requests are refused at once…
	if tok.RefreshToken != "" {
		if _, err := conf.TokenSource(bg, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
			t.Error("a disabled client refreshed its token")
		}
	}
	// …and so are its new authorizations: no code reaches the client.
	must(t, chromedp.Do(ctx, chromedp.Navigate(conf.AuthCodeURL("state-abcdefghij", oauth2.S256ChallengeOption(verifier)))), "authorize again")
	select {
	case q := <-got:
		if q.Get("code") != "" {
			t.Fatalf("a disabled client received a code: %v", q)
		}
	case <-time.After(2 * time.Second):
	}
	evs, _ := s.ListAuditEvents(bg, 10, 0)
	if len(evs) < 2 || evs[0].Action != "client.disable" {
		t.Errorf("audit: %+v", evs)
	}
}

// TestAdminDisablesAccountOnPages: an administrator finds a person on the
// People page with the keyboard, disables the account (its browser session
// ends, sign-in is refused, and the resource server refuses the access
// token of the agent it had linked within 5 s), enables it again, and cannot disable their
// own account. Phone and desktop screenshots of both pages go to
// LINKSLOT_SCREENSHOT_DIR (default var/screenshots).
func TestAdminDisablesAccountOnPages(t *testing.T) {
	ctx := chromium.New(t)
	s := sqltest.SQLite(t)
	bg := context.Background()
	svc, err := admin.New(admin.Config{Store: s})
	must(t, err, "admin service")
	const rootEmail, rootPW = "root@example.com", "Admin-Browser-Passphrase-7"
	const email, pw = "misbehaving@example.com", "Person-Browser-Passphrase-8"
	_, err = svc.CreateUser(bg, admin.Actor{ID: admin.ActorCLI}, rootEmail, rootPW, true)
	must(t, err, "create admin")
	for _, e := range []string{email, "ada@example.com", "grace@example.org"} {
		_, err = svc.CreateUser(bg, admin.Actor{ID: admin.ActorCLI}, e, pw, false)
		must(t, err, "create person")
	}

	srv, ui := newAdminServer(t, s, svc)

	// The person's agent holds an access token for the resource server
	// (linked through the sign-in and consent pages).
	now := store.SystemClock()
	must(t, s.CreateClient(bg, store.Client{ID: "agent-y", Name: "Agent Y", Public: true, RedirectURIs: []string{"http://127.0.0.1/callback"},
		AllowedScopes: []string{"openid", "bookings:read"}, DefaultScopes: []string{"bookings:read"}, GrantTypes: []string{"authorization_code"},
		CreatedAt: now, UpdatedAt: now}), "client")
	tok, err := testkit.LinkThroughPages(bg, testkit.LinkRequest{OAuth: &oauth2.Config{ClientID: "agent-y",
		RedirectURL: "http://127.0.0.1:45679/callback", Scopes: []string{"openid"}, Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth2/authorize",
			TokenURL: srv.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}, Email: email, Password: pw, Resource: resource})
	must(t, err, "link the agent")
	rsClock := &offsetClock{}
	rsH, err := rshttp.New(bg, rshttp.Deps{Store: s, Config: config.Config{Issuer: srv.URL, Resource: resource, SecretKey: adminSecret,
		RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: rsClock.now, NoRateLimits: true})
	must(t, err, "resource server")
	rs := httptest.NewServer(rsH)
	t.Cleanup(rs.Close)
	toolsList := func() int { t.Helper(); return toolsList(t, rs.URL+"/mcp", tok.AccessToken) }
	if st := toolsList(); st != 200 {
		t.Fatalf("the agent's token before the disable: %d", st)
	}

	// The person is signed in somewhere else.
	person := ui.Identity()
	sess, err := func() (string, error) {
		acct, err := person.Authenticate(bg, email, pw, "192.0.2.1")
		if err != nil {
			return "", err
		}
		s, err := person.CreateSession(bg, acct.ID)
		return s.Token, err
	}()
	must(t, err, "person's session")

	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/users"), chromedp.WaitVisible(heading("Sign in"))), "admin → sign in")
	typeInto(t, ctx, "Email", rootEmail)
	typeInto(t, ctx, "Password", rootPW)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign in: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("People"))), "people page")
	if text := bodyText(t, ctx); !strings.Contains(text, "ada@example.com") || !strings.Contains(text, email) {
		t.Fatalf("people page: %s", text)
	}
	shoot(t, ctx, srv.URL, "admin-users", "/admin/users", heading("People"))

	// Search with the keyboard only: focus the field, type, Enter.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/users"), chromedp.WaitVisible(field("Find by email address")),
		chromedp.Focus(field("Find by email address")), chromedp.KeyEvent("misbehav")), "type a query")
	resp, err := chromedp.RunResponse(ctx, chromedp.KeyEvent("\r"))
	must(t, err, "press Enter")
	if resp.Status != 200 {
		t.Fatalf("search: %d", resp.Status)
	}
	if text := bodyText(t, ctx); !strings.Contains(text, email) || strings.Contains(text, "ada@example.com") {
		t.Fatalf("search results: %s", text)
	}
	must(t, chromedp.Do(ctx, chromedp.Click(`//a[normalize-space()="`+email+`"]`), chromedp.WaitVisible(button("Disable this account"))), "open the person")
	shoot(t, ctx, srv.URL, "admin-user", "/admin/users/"+email, heading(email))
	if st := press(t, ctx, "Disable this account"); st != 200 {
		t.Fatalf("disable: %d", st)
	}
	if text := bodyText(t, ctx); !strings.Contains(text, "The account is disabled") || !strings.Contains(text, "disabled") {
		t.Fatalf("after disable: %s", text)
	}
	if _, _, err := person.LookupSession(bg, sess); err == nil {
		t.Error("the person's session survived the disable")
	}
	if _, err := person.Authenticate(bg, email, pw, "192.0.2.1"); err == nil {
		t.Error("a disabled account signed in")
	}
	// The resource server refuses the agent's token within 5 s.
	rsClock.advance(5 * time.Second)
	if st := toolsList(); st != http.StatusUnauthorized {
		t.Errorf("5 s after the disable on the pages the resource server answered %d, want 401", st)
	}
	if st := press(t, ctx, "Enable this account"); st != 200 {
		t.Fatalf("enable: %d", st)
	}
	if !strings.Contains(bodyText(t, ctx), "The account is enabled again") {
		t.Fatal("no confirmation of the enable")
	}
	if _, err := person.Authenticate(bg, email, pw, "192.0.2.1"); err != nil {
		t.Errorf("sign-in after enabling: %v", err)
	}
	// Their own page offers no Disable.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin/users/"+rootEmail), chromedp.WaitVisible(heading(rootEmail))), "own page")
	if text := bodyText(t, ctx); !strings.Contains(text, "This is your own account") {
		t.Errorf("own page: %s", text)
	}
	evs, _ := s.ListAuditEvents(bg, 10, 0)
	if len(evs) < 2 || evs[0].Action != "user.enable" || evs[1].Action != "user.disable" || evs[1].Target != email {
		t.Errorf("audit: %+v", evs)
	}
}

// shoot saves phone and desktop screenshots of path and checks that
// nothing scrolls sideways.
func shoot(t *testing.T, ctx context.Context, base, name, path, wait string) {
	t.Helper()
	chromium.Shoot(t, ctx, chromium.ScreenshotDir(t), name, true, chromedp.Navigate(base+path), chromedp.WaitVisible(wait))
}
