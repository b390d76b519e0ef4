package consentui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkslot/linkslot/internal/store"
)

// newBrowser starts a real headless Chromium with a fresh profile. It skips
// when Chromium is missing, except under CI=true, where it fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; CI requires the browser tests (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("no-first-run", true),
	)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// A person finds a field by its label and a button by its text.
func field(label string) string {
	return fmt.Sprintf(`//input[@id=//label[normalize-space()=%q]/@for]`, label)
}

func button(text string) string { return fmt.Sprintf(`//button[normalize-space()=%q]`, text) }

func heading(text string) string { return fmt.Sprintf(`//h1[contains(normalize-space(), %q)]`, text) }

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// press clicks a button and waits for the page it leads to; it returns
// the HTTP status of that page.
func press(t *testing.T, ctx context.Context, text string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(button(text)))
	must(t, err, "press "+text)
	return resp.Status
}

func typeInto(t *testing.T, ctx context.Context, label, value string) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(field(label)), chromedp.SendKeys(field(label), value)), "type into "+label)
}

func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text("body", chromedp.NodeVisible))
	must(t, err, "read page")
	return s
}

// clientListener is the OAuth client's loopback redirect target.
func clientListener(t *testing.T) (*httptest.Server, chan url.Values) {
	got := make(chan url.Values, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		got <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Client</title><h1>Client received the answer</h1>")
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestBrowserAccountFlow(t *testing.T) {
	ctx := newBrowser(t)
	e := newEnv(t, envOpts{argon2: true})
	cl, got := clientListener(t)
	const email, pw = "grace@example.com", "Browser-Canary-Passphrase-42"

	// Sign up.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/signup")), "open sign-up")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	typeInto(t, ctx, "Repeat password", pw)
	if st := press(t, ctx, "Create account"); st != 200 {
		t.Fatalf("sign-up answered %d", st)
	}
	if !strings.Contains(bodyText(t, ctx), "If this address was not registered yet") {
		t.Fatal("no sign-up notice")
	}

	// Start an authorization: not signed in, so to the sign-in page first.
	authorize := e.srv.URL + "/test/authorize?redirect_uri=" + url.QueryEscape(cl.URL+"/callback")
	must(t, chromedp.Do(ctx, chromedp.Navigate(authorize), chromedp.WaitVisible(heading("Sign in"))), "authorize → sign in")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign-in answered %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("wants to connect"))), "consent page")
	text := bodyText(t, ctx)
	for _, want := range []string{"Trip Planner", email, "See your bookings and check availability",
		"Book, move and cancel appointments, each only after you confirm", "127.0.0.1"} {
		if !strings.Contains(text, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	// Allow: the form's POST answers 302 to the client's loopback origin,
	// which the page's form-action must let through.
	if st := press(t, ctx, "Allow"); st != 200 {
		t.Fatalf("client page answered %d", st)
	}
	select {
	case q := <-got:
		if q.Get("code") != "test-code" || q.Get("state") != "st-123" {
			t.Fatalf("client got %v", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client's redirect URI was never reached (CSP form-action?)")
	}

	// Deny on a second authorization: the client receives access_denied.
	must(t, chromedp.Do(ctx, chromedp.Navigate(authorize), chromedp.WaitVisible(heading("wants to connect"))), "consent again")
	press(t, ctx, "Deny")
	select {
	case q := <-got:
		if q.Get("error") != "access_denied" {
			t.Fatalf("deny: client got %v", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("deny never reached the client")
	}

	// Connected apps: the approved link is listed; Disconnect revokes it.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/account/connections"), chromedp.WaitVisible(heading("Connected apps"))), "connections")
	if !strings.Contains(bodyText(t, ctx), "Trip Planner") {
		t.Fatal("link not listed")
	}
	acct, err := e.store.GetAccountByEmail(context.Background(), email)
	must(t, err, "account")
	links, _ := e.store.ListAccountLinks(context.Background(), acct.ID)
	if len(links) != 1 || links[0].Status != store.LinkActive {
		t.Fatalf("links = %+v", links)
	}

	// CSRF: a form whose token was removed, or replaced, is refused.
	for name, js := range map[string]string{
		"missing": `document.querySelectorAll('input[name=csrf_token]').forEach(e => e.remove()); true`,
		"wrong":   `document.querySelectorAll('input[name=csrf_token]').forEach(e => e.value = 'forged'); true`,
	} {
		must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/account/connections"), chromedp.WaitVisible(heading("Connected apps"))), "connections")
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		must(t, err, "tamper")
		if st := press(t, ctx, "Disconnect"); st != http.StatusForbidden {
			t.Errorf("%s token: status %d", name, st)
		}
		if !strings.Contains(bodyText(t, ctx), "This form has expired") {
			t.Errorf("%s token: no explanation", name)
		}
	}
	if l, _ := e.store.GetLink(context.Background(), links[0].ID); l.Status != store.LinkActive {
		t.Fatal("a forged form disconnected the app")
	}

	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/account/connections"), chromedp.WaitVisible(heading("Connected apps"))), "connections")
	if st := press(t, ctx, "Disconnect"); st != 200 {
		t.Fatalf("disconnect: %d", st)
	}
	text = bodyText(t, ctx)
	if !strings.Contains(text, "was disconnected") || !strings.Contains(text, "No apps are connected") {
		t.Fatalf("after disconnect: %s", text)
	}
	if l, _ := e.store.GetLink(context.Background(), links[0].ID); l.Status != store.LinkRevoked {
		t.Fatal("link not revoked")
	}

	// Sign out from the footer.
	if st := press(t, ctx, "Sign out"); st != 200 {
		t.Fatalf("sign out: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "signed out")

	if strings.Contains(e.logs.String(), pw) {
		t.Fatal("the password reached the logs")
	}
}

// screenshotDir is LINKSLOT_SCREENSHOT_DIR, or var/screenshots at the
// module root.
func screenshotDir(t *testing.T) string {
	d := os.Getenv("LINKSLOT_SCREENSHOT_DIR")
	if d == "" {
		d = filepath.Join("..", "var", "screenshots")
	}
	must(t, os.MkdirAll(d, 0o755), "screenshot folder")
	return d
}

func TestBrowserScreenshots(t *testing.T) {
	ctx := newBrowser(t)
	e := newEnv(t, envOpts{})
	const email = "grace.hopper@example.com"
	acct := e.client().signUpAndIn(email, testPassword)
	bg := context.Background()
	e.store.CreateClient(bg, store.Client{ID: "helper", Name: "Calendar Helper", Public: true,
		RedirectURIs: []string{"https://helper.example.com/cb"}, CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()})
	l, _ := e.store.UpsertLink(bg, acct.ID, "agent", []string{"openid", "bookings:read", "bookings:write"}, e.clock.Now().Add(-72*time.Hour))
	e.store.TouchLink(bg, l.ID, e.clock.Now().Add(-2*time.Hour))
	for i, a := range []struct{ tool, summary, said string }{
		{"create_my_booking", "Haircut (45 min) with Sam at Studio Nord, Tuesday 3 March 2026, 10:00–10:45 Europe/Berlin (CET). Price EUR 38.00. Free cancellation until 24 hours before; later EUR 10.00. Your notes are visible to the business.", "Yes, book it."},
		{"reschedule_my_booking", "Move your haircut at Studio Nord from Tuesday 3 March 10:00 to Thursday 5 March 2026, 16:30–17:15 Europe/Berlin (CET), still with Sam. Price unchanged: EUR 38.00.", "Thursday afternoon works, go ahead"},
		{"cancel_my_booking", "Cancel your haircut at Studio Nord on Thursday 5 March 2026, 16:30 Europe/Berlin (CET). No cancellation fee applies.", "cancel it please"},
	} {
		e.store.AddActivity(bg, store.Activity{ID: store.NewID("act"), AccountID: acct.ID, LinkID: l.ID, ClientID: "agent", Tool: a.tool,
			Arguments: []byte("{}"), Summary: a.summary, ConfirmationText: a.said, IdempotencyKey: "screenshot-key-000000" + fmt.Sprint(i),
			Outcome: []byte("{}"), CreatedAt: e.clock.Now().Add(time.Duration(i-3) * time.Hour)})
	}
	e.store.UpsertLink(bg, acct.ID, "helper", []string{"bookings:read"}, e.clock.Now().Add(-24*time.Hour))
	dir := screenshotDir(t)

	sizes := []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"phone", 390, 844, true}, {"desktop", 1280, 800, false}}
	shoot := func(name, path, wait string) {
		t.Helper()
		for _, sz := range sizes {
			opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
			if sz.mobile {
				opts = []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateScale(2)}
			}
			must(t, chromedp.Do(ctx, chromedp.EmulateViewport(sz.w, sz.h, opts...),
				chromedp.Navigate(e.srv.URL+path), chromedp.WaitVisible(wait)), "open "+name)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			must(t, err, "screenshot")
			must(t, os.WriteFile(filepath.Join(dir, name+"-"+sz.name+".png"), png, 0o644), "write")
			// The layout fits the width: nothing scrolls sideways.
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
			must(t, err, "overflow")
			if overflow {
				t.Errorf("%s at %s scrolls sideways", name, sz.name)
			}
		}
	}
	shoot("login", "/login", heading("Sign in"))
	shoot("signup", "/signup", heading("Create your"))
	// Sign in with the keyboard only: type, Tab to the password (which
	// shows a visible focus outline), Enter to submit.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/login"), chromedp.WaitVisible(field("Email")),
		chromedp.Focus(field("Email")), chromedp.KeyEvent(email+"\t"+testPassword)), "type with the keyboard")
	focus, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`document.activeElement.id + ' ' + getComputedStyle(document.activeElement).outlineStyle + ' ' + getComputedStyle(document.activeElement).outlineWidth`))
	must(t, err, "focus")
	if focus != "password solid 3px" {
		t.Errorf("focused element and outline = %q, want the password field with a visible outline", focus)
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.KeyEvent("\r"))
	must(t, err, "press Enter")
	if resp.Status != 200 || !strings.HasSuffix(resp.URL, "/account") {
		t.Fatalf("keyboard sign-in: %d %s", resp.Status, resp.URL)
	}
	shoot("consent", "/test/authorize?redirect_uri="+url.QueryEscape("http://127.0.0.1:43110/callback"), heading("wants to connect"))
	shoot("connections", "/account/connections", heading("Connected apps"))
	shoot("account", "/account", heading("Your account"))
	shoot("activity", "/account/activity", heading("Activity"))
	t.Logf("screenshots in %s", dir)
}
