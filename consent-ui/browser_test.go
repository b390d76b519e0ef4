package consentui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

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
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"), chromedp.NodeVisible))
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
	ctx := chromium.New(t)
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

func TestBrowserScreenshots(t *testing.T) {
	ctx := chromium.New(t)
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
	dir := chromium.ScreenshotDir(t)

	shoot := func(name, path, wait string) { t.Helper(); shootPage(t, ctx, e.srv.URL, dir, name, path, wait) }
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

// shootPage saves phone and desktop screenshots of base+path as
// NAME-phone.png and NAME-desktop.png in dir, and fails when the page
// scrolls sideways at either size.
func shootPage(t *testing.T, ctx context.Context, base, dir, name, path, wait string) {
	t.Helper()
	chromium.Shoot(t, ctx, dir, name, true, chromedp.Navigate(base+path), chromedp.WaitVisible(wait))
}

// shootCurrent is shootPage for the page the browser shows (the answer to
// a form), without loading it again.
func shootCurrent(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	chromium.Shoot(t, ctx, dir, name, true)
}

// TestBrowserPasswordReset: "Forgot your password?" from the sign-in page,
// the same answer for a known and an unknown address, the link e-mailed
// through the outbox to an SMTP server (parsed with the MIME libraries),
// a new password that ends every session, sign-in with it; the used,
// tampered and expired links each get a page that says so and offers a
// new one. Screenshots of every new page.
func TestBrowserPasswordReset(t *testing.T) {
	ctx := chromium.New(t)
	e := newEnv(t, envOpts{smtp: true})
	const email, next = "grace@example.com", "A-Brand-New-Passphrase-77"
	other := e.client()
	other.signUpAndIn(email, testPassword) // signed in elsewhere
	dir := chromium.ScreenshotDir(t)

	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/login"), chromedp.WaitVisible(heading("Sign in")),
		chromedp.Click(`//a[normalize-space()="Forgot your password?"]`), chromedp.WaitVisible(heading("Forgot"))), "forgot page")
	typeInto(t, ctx, "Email", "nobody@example.com")
	if st := press(t, ctx, "Send me a link"); st != 200 {
		t.Fatalf("unknown address: %d", st)
	}
	unknown := strings.ReplaceAll(bodyText(t, ctx), "nobody@example.com", "ADDRESS")
	shootPage(t, ctx, e.srv.URL, dir, "forgot", "/password/forgot", heading("Forgot"))
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/password/forgot"), chromedp.WaitVisible(heading("Forgot"))), "forgot page")
	typeInto(t, ctx, "Email", email)
	if st := press(t, ctx, "Send me a link"); st != 200 {
		t.Fatalf("known address: %d", st)
	}
	if known := strings.ReplaceAll(bodyText(t, ctx), email, "ADDRESS"); known != unknown {
		t.Errorf("the answer tells a known address from an unknown one:\n%s\n---\n%s", known, unknown)
	}
	// The sign-up's verification e-mail, then the reset link, both over
	// SMTP; the unknown address got none.
	link := e.mailLink(2, email, "/password/reset")
	if ms := e.smtp.Mails(); len(ms) != 2 {
		t.Fatalf("%d e-mails after two requests, want the sign-up's and the known address's", len(ms))
	}

	// A tampered link.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+link+"x"), chromedp.WaitVisible(heading("not valid"))), "tampered link")
	if !strings.Contains(bodyText(t, ctx), "Get a new link") {
		t.Error("the tampered-link page offers no new link")
	}
	shootPage(t, ctx, e.srv.URL, dir, "reset-link-invalid", link+"x", heading("not valid"))

	shootPage(t, ctx, e.srv.URL, dir, "reset", link, heading("Choose a new password"))
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+link), chromedp.WaitVisible(heading("Choose a new password"))), "reset page")
	typeInto(t, ctx, "New password", next)
	typeInto(t, ctx, "Repeat new password", next+"typo")
	if st := press(t, ctx, "Set the new password"); st != http.StatusUnprocessableEntity {
		t.Fatalf("mismatched passwords: %d", st)
	}
	typeInto(t, ctx, "New password", next)
	typeInto(t, ctx, "Repeat new password", next)
	if st := press(t, ctx, "Set the new password"); st != 200 {
		t.Fatalf("reset: %d %s", st, bodyText(t, ctx))
	}
	if !strings.Contains(bodyText(t, ctx), "Your password has been changed") {
		t.Fatalf("after reset: %s", bodyText(t, ctx))
	}
	// Every session ended: the other browser is signed out.
	if r := other.get("/account"); r.status != http.StatusSeeOther {
		t.Errorf("the other browser's session survived the reset: %d", r.status)
	}
	typeInto(t, ctx, "Password", next)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign in with the new password: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Your account"))), "signed in")

	// The used link.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+link), chromedp.WaitVisible(heading("used already"))), "used link")
	shootPage(t, ctx, e.srv.URL, dir, "reset-link-used", link, heading("used already"))

	// An expired link (31 minutes later).
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/password/forgot"), chromedp.WaitVisible(heading("Forgot"))), "forgot page")
	typeInto(t, ctx, "Email", email)
	press(t, ctx, "Send me a link")
	shootPage(t, ctx, e.srv.URL, dir, "forgot-sent", "/password/forgot", heading("Forgot"))
	late := e.mailLink(4, email, "/password/reset") // after the password-changed notice
	if late == link {
		t.Fatal("the second request did not get a new link")
	}
	e.clock.Advance(31 * time.Minute)
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+late), chromedp.WaitVisible(heading("expired"))), "expired link")
	if !strings.Contains(bodyText(t, ctx), "Get a new link") {
		t.Error("the expired-link page offers no new link")
	}
	if strings.Contains(e.logs.String(), next) || strings.Contains(e.logs.String(), strings.TrimPrefix(link, "/password/reset?token=")) {
		t.Error("a password or a reset token reached the logs")
	}
}

// signUpInBrowser creates an account on the sign-up page and signs in with
// it on the sign-in page that follows.
func signUpInBrowser(t *testing.T, ctx context.Context, base, email, pw string) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/signup")), "sign-up")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	typeInto(t, ctx, "Repeat password", pw)
	if st := press(t, ctx, "Create account"); st != 200 {
		t.Fatalf("sign-up answered %d: %s", st, bodyText(t, ctx))
	}
	typeInto(t, ctx, "Password", pw)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign in: %d", st)
	}
}

// TestBrowserVerificationPages: the account and consent pages of an
// unverified account, the resend (both links e-mailed over SMTP), and the
// verification link's pages
// (confirmed, used, tampered), with screenshots.
func TestBrowserVerificationPages(t *testing.T) {
	ctx := chromium.New(t)
	e := newEnv(t, envOpts{smtp: true})
	const email = "ada@example.com"
	dir := chromium.ScreenshotDir(t)
	signUpInBrowser(t, ctx, e.srv.URL, email, testPassword)
	if !strings.Contains(bodyText(t, ctx), "not confirmed yet") {
		t.Error("the account page does not say the address is unconfirmed")
	}
	shootPage(t, ctx, e.srv.URL, dir, "account-unverified", "/account", heading("Your account"))
	shootPage(t, ctx, e.srv.URL, dir, "consent-unverified", "/test/authorize?unverified=1&redirect_uri="+url.QueryEscape("http://127.0.0.1:43110/callback"),
		heading("wants to connect"))
	// Resend from the consent page, then back to the app's request.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/test/authorize?unverified=1&redirect_uri="+url.QueryEscape("http://127.0.0.1:43110/callback")),
		chromedp.WaitVisible(heading("wants to connect"))), "consent")
	if st := press(t, ctx, "Send me a new link"); st != 200 {
		t.Fatalf("resend: %d", st)
	}
	if !strings.Contains(bodyText(t, ctx), "We have sent a new confirmation link to "+email) {
		t.Errorf("after resend: %s", bodyText(t, ctx))
	}
	link := e.mailLink(2, email, "/verify")
	if n := len(e.smtp.Mails()); n != 2 {
		t.Errorf("%d e-mails, want the sign-up's and the resend's", n)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+link+"A"), chromedp.WaitVisible(heading("not valid"))), "tampered")
	if !strings.Contains(bodyText(t, ctx), "Ask for a new link") {
		t.Error("the tampered link's page offers no new link to a signed-in person")
	}
	shootPage(t, ctx, e.srv.URL, dir, "verify-link-invalid", link+"A", heading("not valid"))
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+link), chromedp.WaitVisible(heading("confirmed"))), "verify")
	shootCurrent(t, ctx, dir, "verified")
	shootPage(t, ctx, e.srv.URL, dir, "verify-link-used", link, heading("used already"))
	if a, _ := e.store.GetAccountByEmail(context.Background(), email); a.EmailVerifiedAt == nil {
		t.Error("the address is not verified")
	}
}
