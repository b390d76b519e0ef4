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
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// urlClientDoc is a client ID metadata document.
func urlClientDoc(u, name string, redirects ...string) string {
	b, _ := json.Marshal(map[string]any{"client_id": u, "client_name": name, "redirect_uris": redirects,
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	return string(b)
}

// TestBrowserURLClientPages drives the real authorization server (policies
// registered and open, one database) with these pages in headless Chromium
// for clients identified by the URL of their metadata document, served over
// HTTPS under names of their own (a test CA and a resolver that answers
// them with loopback). It checks what a person reads and takes phone and
// desktop screenshots of the consent page of a registered URL client, of an
// unverified one under the open policy (and of one whose name carries a
// right-to-left override), of one whose every redirect is
// on the person's own computer, and of the error pages an unregistered one
// and a redirect address its document does not list end on.
func TestBrowserURLClientPages(t *testing.T) {
	ctx := chromium.New(t)
	bg := context.Background()
	s := sqltest.SQLite(t)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	host := testkit.NewDocHost(t, "assistant.example", "helper.example", "terminal.example")
	fetch := authhttp.FetchOptions{Resolver: host.Resolver(), RootCAs: host.CA.Pool()}
	secret := bytes.Repeat([]byte("u"), 32)

	// One authorization server per policy on the same database and key: a
	// session from one is a session on the other.
	server := func(policy string) string {
		var h http.Handler
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		cfg := config.Config{Issuer: srv.URL, Resource: srv.URL + "/mcp", SecretKey: secret,
			RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour,
			CIMDPolicy: policy, CIMDOpenScopes: []string{"bookings:read"}}
		var err error
		h, _, err = authhttp.Wire(bg, authhttp.Deps{Store: s, Config: cfg, Logger: logger, Fetch: fetch}, authhttp.Wiring{})
		must(t, err, "authorization server ("+policy+")")
		return srv.URL
	}
	registered, open := server("registered"), server("open")

	// The documents, and the administrator's registrations (as
	// `authserver clients register-url` makes them).
	assistant := host.At("assistant.example") + "/oauth/client-metadata.json"
	host.Put("/oauth/client-metadata.json", http.StatusOK,
		urlClientDoc(assistant, "Calendar Assistant", "https://assistant.example/oauth/callback"))
	helper := host.At("helper.example") + "/client.json"
	host.Put("/client.json", http.StatusOK, urlClientDoc(helper, "Booking Helper", "https://helper.example/connected"))
	terminal := host.At("terminal.example") + "/cli/client.json"
	host.Put("/cli/client.json", http.StatusOK,
		urlClientDoc(terminal, "Terminal Agent", "http://127.0.0.1/callback", "http://localhost/callback"))
	spoof := host.At("helper.example") + "/spoof.json"
	host.Put("/spoof.json", http.StatusOK, urlClientDoc(spoof, "Claude\u202emoc.tfosorcim\u202c", "https://helper.example/connected"))
	stranger := host.At("helper.example") + "/unlisted.json"
	host.Put("/unlisted.json", http.StatusOK, urlClientDoc(stranger, "Unlisted Agent", "https://helper.example/cb"))
	adm, err := admin.New(admin.Config{Store: s, Documents: cimd.NewResolver(nil,
		cimd.Options{Development: true, Resolver: fetch.Resolver, RootCAs: fetch.RootCAs})})
	must(t, err, "admin service")
	for _, u := range []string{assistant, terminal} {
		_, err := adm.RegisterURLClient(bg, admin.Actor{ID: "cli"}, admin.URLClientSpec{URL: u})
		must(t, err, "register "+u)
	}

	// A person with a confirmed address signs in.
	const email, pw = "margaret@example.com", "Url-Client-Passphrase-7"
	signInConfirmed(t, ctx, s, registered, email, pw)

	cl, got := clientListener(t)
	authorizeURL := func(issuer, clientID, redirect string) string {
		c := &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: []string{"openid", "bookings:read"},
			Endpoint: oauth2.Endpoint{AuthURL: issuer + "/oauth2/authorize", TokenURL: issuer + "/oauth2/token"}}
		return c.AuthCodeURL("url-client-state", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	}
	dir := chromium.ScreenshotDir(t)
	// Every card holds its text: a long host or address wraps instead of
	// running past the card's edge (at the phone size, the last one shot).
	fits := func(name string) {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2))), "phone size")
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`[...document.querySelectorAll('.card')].every(c => c.scrollWidth <= c.clientWidth)`))
		must(t, err, "card width")
		if !ok {
			t.Errorf("%s: text runs past the card's edge on a phone", name)
		}
		must(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)), "reset the viewport")
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+jsString(sel)+`)||{}).innerText||""`))
		must(t, err, "read "+sel)
		return strings.TrimSpace(s)
	}
	consentPage := func(name, url string, wants, lacks []string) string {
		t.Helper()
		shootPage(t, ctx, "", dir, name, url, heading("wants to connect"))
		fits(name)
		page := bodyText(t, ctx)
		for _, w := range wants {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page does not say %q:\n%s", name, w, page)
			}
		}
		for _, l := range lacks {
			if strings.Contains(page, l) {
				t.Errorf("%s: the page says %q:\n%s", name, l, page)
			}
		}
		// The host is in bold, inside the heading, beside the name the
		// document gives.
		weight, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`(() => { const e = document.querySelector('h1 strong.client-host'); return e ? getComputedStyle(e).fontWeight : '' })()`))
		must(t, err, "font weight")
		if weight != "700" && weight != "800" && weight != "900" && weight != "600" {
			t.Errorf("%s: the host in the heading is not bold (font-weight %q)", name, weight)
		}
		return page
	}
	hostOf := func(u string) string { return strings.SplitN(strings.TrimPrefix(u, "https://"), "/", 2)[0] }
	const unverified = "Linkslot has not verified this app"
	const ownComputer = "This app sends you back to a program on your own computer"

	// (a) A registered URL client.
	consentPage("consent-url-registered", authorizeURL(registered, assistant, "https://assistant.example/oauth/callback"),
		[]string{hostOf(assistant) + " wants to connect to your Linkslot account", "It calls itself Calendar Assistant.",
			"you will be sent back to https://assistant.example/oauth/callback", email, "See your bookings"},
		[]string{unverified, ownComputer})
	if h := text("h1 strong.client-host"); h != hostOf(assistant) {
		t.Errorf("bold host %q, want %q", h, hostOf(assistant))
	}
	if r := text("strong.redirect"); r != "https://assistant.example/oauth/callback" {
		t.Errorf("where the person goes back to: %q", r)
	}

	// (b) An unregistered client under the open policy: not verified.
	consentPage("consent-url-open", authorizeURL(open, helper, "https://helper.example/connected"),
		[]string{hostOf(helper) + " wants to connect", "It calls itself Booking Helper.", unverified,
			"allow it only if you trust " + hostOf(helper), "you will be sent back to https://helper.example/connected"},
		[]string{ownComputer})
	if role := text(".alert.unverified"); !strings.HasPrefix(role, unverified) {
		t.Errorf("the open-policy warning reads %q", role)
	}

	// (b2) Under the open policy a document whose name carries a
	// right-to-left override ("Claude" and reversed text, to read "Claude
	// microsoft.com") is not a valid document: the text rule at the door
	// refuses its client_name, and the person sees the refusal on the
	// authorization server, never a consent page with the spoofed name
	// (docs/reference.md §4, §10). A name stored before the rule is still
	// shown stripped and isolated in <bdi> (TestConsentNameCannotReorder).
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(authorizeURL(open, spoof, "https://helper.example/connected")))
	must(t, err, "open the spoofing document's authorization")
	if resp.Status != http.StatusBadRequest || !strings.HasPrefix(resp.URL, open+"/oauth2/authorize") {
		t.Fatalf("spoofing document: %d at %s, want 400 on the authorization server", resp.Status, resp.URL)
	}
	if page := bodyText(t, ctx); !strings.Contains(page, "client_name") || strings.Contains(page, "Claude microsoft.com") {
		t.Errorf("the spoofing document's refusal does not name client_name, or shows the spoof:\n%s", page)
	}

	// (c) Every redirect on the person's own computer: the warning, the
	// loopback address it goes back to (its port is the app's own), and
	// Allow reaches the app there with a code.
	back := cl.URL + "/callback"
	consentPage("consent-url-loopback", authorizeURL(registered, terminal, back),
		[]string{hostOf(terminal) + " wants to connect", "It calls itself Terminal Agent.", ownComputer,
			"Allow it only if you started it yourself just now", "you will be sent back to " + back},
		[]string{unverified})
	press(t, ctx, "Allow")
	select {
	case q := <-got:
		if q.Get("code") == "" || q.Get("state") != "url-client-state" || q.Get("iss") != registered {
			t.Fatalf("the loopback client got %v", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Allow never reached the loopback client")
	}

	// An unregistered URL client under the registered policy ends on the
	// error page, in words, without a redirect and without a fetch.
	resp, err = chromedp.RunResponse(ctx, chromedp.Navigate(authorizeURL(registered, stranger, "https://helper.example/cb")))
	must(t, err, "open the refused client's authorization")
	if resp.Status != http.StatusBadRequest || !strings.HasPrefix(resp.URL, registered+"/oauth2/authorize") {
		t.Fatalf("refused client: %d at %s, want 400 on the authorization server", resp.Status, resp.URL)
	}
	shootPage(t, ctx, "", dir, "error-url-refused", authorizeURL(registered, stranger, "https://helper.example/cb"), "h1")
	fits("error-url-refused")
	page := bodyText(t, ctx)
	for _, w := range []string{"identifies itself by the web address " + stranger + ", which no administrator of this Linkslot server has registered",
		"Go to your account"} {
		if !strings.Contains(page, w) {
			t.Errorf("refused client's page does not say %q:\n%s", w, page)
		}
	}
	if strings.Contains(page, "{") || strings.Contains(page, "Unlisted Agent") {
		t.Errorf("the error page shows the document:\n%s", page)
	}
	if host.Hits("/unlisted.json") != 0 {
		t.Error("an unregistered URL client's document was fetched")
	}

	// A registered URL client asking to go back where its document does
	// not say: the page names the address and lists the document's, with
	// the any-port rule in words.
	inspector := "http://127.0.0.1:6276/oauth/callback"
	shootPage(t, ctx, "", dir, "error-url-redirect", authorizeURL(registered, terminal, inspector), heading("Invalid redirect address"))
	fits("error-url-redirect")
	page = bodyText(t, ctx)
	for _, w := range []string{"The app at " + hostOf(terminal) + " asked Linkslot to send you back to " + inspector + ", which is not an address it may use.",
		"http://127.0.0.1/callback (any port)", "http://localhost/callback (any port)", "matches with any port",
		"the app's description at " + terminal + " lists"} {
		if !strings.Contains(page, w) {
			t.Errorf("refused redirect's page does not say %q:\n%s", w, page)
		}
	}
	if code := text("code.refused"); code != inspector {
		t.Errorf("the refused address reads %q, want %q", code, inspector)
	}
	if strings.Contains(logs.String(), pw) {
		t.Error("the password reached the logs")
	}
	t.Logf("screenshots in %s", dir)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }
