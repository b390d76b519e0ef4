package consentui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// TestBrowserDynamicClientPages runs the authorization server under
// LINKSLOT_DCR_POLICY=open with these pages in headless Chromium, for
// clients that registered themselves (RFC 7591): the consent page says the
// app is not verified and names where it sends the person back — a
// private-use scheme (Cursor's cursor://) or a loopback address, where
// Allow delivers the code. It takes phone and desktop screenshots of both.
func TestBrowserDynamicClientPages(t *testing.T) {
	ctx := chromium.New(t)
	bg := context.Background()
	s := sqltest.SQLite(t)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secret := bytes.Repeat([]byte("d"), 32)
	var h http.Handler
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	cfg := config.Config{Issuer: srv.URL, Resource: srv.URL + "/mcp", SecretKey: secret,
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour, DCRPolicy: "open"}
	h, _, err := authhttp.Wire(bg, authhttp.Deps{Store: s, DCRStore: s, Config: cfg, Logger: logger}, authhttp.Wiring{})
	must(t, err, "authorization server")

	cl, got := clientListener(t)
	register := func(name, redirect string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "none", "scope": "openid offline_access"})
		resp, err := http.Post(srv.URL+"/oauth2/register", "application/json", bytes.NewReader(b))
		must(t, err, "register "+name)
		defer resp.Body.Close()
		var r struct {
			ClientID string `json:"client_id"`
		}
		if json.NewDecoder(resp.Body).Decode(&r); resp.StatusCode != http.StatusCreated || r.ClientID == "" {
			t.Fatalf("register %s: %d", name, resp.StatusCode)
		}
		return r.ClientID
	}
	const cursorBack = "cursor://anysphere.cursor-mcp/oauth/callback"
	cursor := register("Cursor", cursorBack)
	loopBack := cl.URL + "/callback"
	local := register("Terminal Agent", loopBack)

	const email, pw = "ada@example.com", "Dynamic-Client-Passphrase-3"
	signInConfirmed(t, ctx, s, srv.URL, email, pw)

	authorizeURL := func(clientID, redirect string) string {
		c := &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: []string{"openid"},
			Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth2/authorize"}}
		return c.AuthCodeURL("dcr-client-state", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	}
	dir := chromium.ScreenshotDir(t)
	const unverified = "Linkslot has not verified this app. It registered itself, and anyone can register an app under any name."
	consentPage := func(name, url string, wants []string) {
		t.Helper()
		shootPage(t, ctx, "", dir, name, url, heading("wants to connect"))
		page := bodyText(t, ctx)
		for _, w := range wants {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page does not say %q:\n%s", name, w, page)
			}
		}
	}

	// (a) Cursor, which sends the person back to its own scheme.
	consentPage("consent-dcr-cursor", authorizeURL(cursor, cursorBack), []string{"Cursor wants to connect to your Linkslot account",
		unverified, "It sends you back to cursor://anysphere.cursor-mcp: allow it only if you trust that and started the app yourself.",
		"you will be sent back to " + cursorBack, "See your bookings", email})
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(authorizeURL(cursor, cursorBack)))
	must(t, err, "reload Cursor's consent page")
	if csp, _ := resp.Headers["Content-Security-Policy"].(string); !strings.Contains(csp, "form-action 'self' cursor:;") {
		t.Errorf("the consent page's form-action does not admit cursor: (%q), so Allow could not reach the app", csp)
	}

	// (b) A program on the person's own computer: the loopback warning as
	// well, and Allow reaches it with a code.
	consentPage("consent-dcr-loopback", authorizeURL(local, loopBack), []string{"Terminal Agent wants to connect", unverified,
		"This app sends you back to a program on your own computer", "you will be sent back to " + loopBack})
	press(t, ctx, "Allow")
	select {
	case q := <-got:
		if q.Get("code") == "" || q.Get("state") != "dcr-client-state" || q.Get("iss") != srv.URL {
			t.Fatalf("the loopback client got %v", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Allow never reached the loopback client")
	}
	if strings.Contains(logs.String(), pw) {
		t.Error("the password reached the logs")
	}
	t.Logf("screenshots in %s", dir)
}

// signInConfirmed creates a person with a confirmed address and signs the
// browser in on the authorization server at base.
func signInConfirmed(t *testing.T, ctx context.Context, s store.Store, base, email, pw string) {
	t.Helper()
	hash, err := password.Hash(pw)
	must(t, err, "hash")
	now := store.SystemClock()
	must(t, s.CreateAccount(context.Background(), store.Account{ID: store.NewID("acct"), Email: email, PasswordHash: hash,
		CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}), "account")
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/login")), "open sign-in")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
}
