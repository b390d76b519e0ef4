package consentui_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	consentui "github.com/linkslot/linkslot/consent-ui"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const testPassword = "Sup3r-Secret-Passphrase-7781"

func checkHeaders(t *testing.T, name string, r resp, page bool) {
	t.Helper()
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: CSP %q lacks %q", name, csp, want)
		}
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("%s: headers %v", name, r.header)
	}
	if page && r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control %q", name, r.header.Get("Cache-Control"))
	}
}

func TestHeadersOnEveryPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	anon := e.client()
	for _, p := range []string{"/login", "/signup", "/logout", "/account", "/account/password", "/account/connections", "/account/activity", "/login?next=//evil.example"} {
		checkHeaders(t, "anonymous GET "+p, anon.get(p), true)
	}
	checkHeaders(t, "CSRF refusal", anon.do("POST", "/login", url.Values{"email": {"x"}}), true)
	st := anon.get("/static/linkslot.css")
	if st.status != 200 || !strings.HasPrefix(st.header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %q", st.status, st.header.Get("Content-Type"))
	}
	checkHeaders(t, "stylesheet", st, false)
	if r := anon.get("/static/"); r.status != 404 {
		t.Errorf("static listing: %d", r.status)
	}
	c := e.client()
	c.signUpAndIn("ada@example.com", testPassword)
	for _, p := range []string{"/account", "/account/password", "/account/connections", "/account/activity", "/logout",
		"/test/authorize?redirect_uri=http://127.0.0.1:5555/cb"} {
		r := c.get(p)
		if r.status != 200 {
			t.Fatalf("GET %s: %d", p, r.status)
		}
		checkHeaders(t, "signed-in GET "+p, r, true)
		if !strings.Contains(r.body, `name="viewport"`) || !strings.Contains(r.body, "Linkslot") {
			t.Errorf("%s: no viewport or brand", p)
		}
	}
	r := c.do("POST", "/account/connections/disconnect", url.Values{"link_id": {"x"}, "csrf_token": {c.csrf("/account/connections")}})
	checkHeaders(t, "not-found error page", r, true)
}

func TestCookies(t *testing.T) {
	for _, tc := range []struct {
		issuer, name string
		secure       bool
	}{
		{"http://127.0.0.1:8080", "linkslot_session", false},
		{"https://auth.example.com", "__Host-linkslot_session", true},
	} {
		t.Run(tc.issuer, func(t *testing.T) {
			e := newEnv(t, envOpts{issuer: tc.issuer})
			c := e.client()
			c.signUp("ada@example.com", testPassword)
			// Drive the handler directly: the cookie jar would drop
			// Secure cookies over plain http.
			rec := httptest.NewRecorder()
			form := url.Values{"email": {"ada@example.com"}, "password": {testPassword}}
			req := httptest.NewRequest("GET", "/login", nil)
			w0 := httptest.NewRecorder()
			tok := e.ui.CSRFToken(w0, req)
			form.Set("csrf_token", tok)
			req = httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, ck := range w0.Result().Cookies() {
				req.AddCookie(ck)
				if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != tc.secure {
					t.Errorf("CSRF cookie %+v", ck)
				}
			}
			mux := http.NewServeMux()
			e.ui.Mount(mux)
			mux.ServeHTTP(rec, req)
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("login: %d %s", rec.Code, rec.Body)
			}
			var found bool
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == tc.name {
					found = true
					if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != tc.secure || ck.Path != "/" || ck.Domain != "" {
						t.Errorf("session cookie %+v", ck)
					}
					if len(ck.Value) != 43 {
						t.Errorf("session cookie value length %d", len(ck.Value))
					}
				}
			}
			if !found {
				t.Fatalf("no %s cookie in %v", tc.name, rec.Result().Cookies())
			}
		})
	}
}

func TestCSRFRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	link, err := e.store.UpsertLink(context.Background(), acct.ID, "agent", []string{"bookings:read"}, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := e.client()
	otherTok := other.csrf("/login") // a valid token of another browser
	posts := []struct {
		path string
		form url.Values
	}{
		{"/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}}},
		{"/signup", url.Values{"email": {"eve@example.com"}, "password": {testPassword}, "password_repeat": {testPassword}}},
		{"/logout", url.Values{}},
		{"/account/password", url.Values{"current_password": {testPassword}, "new_password": {"another long one"}, "new_password_repeat": {"another long one"}}},
		{"/account/connections/disconnect", url.Values{"link_id": {link.ID}}},
		{"/test/authorize", url.Values{"decision": {"allow"}, "client_id": {"agent"}, "redirect_uri": {"http://127.0.0.1:9/cb"}}},
	}
	for _, p := range posts {
		for name, tok := range map[string]string{"missing": "", "wrong": "AAAA", "another browser's": otherTok} {
			form := url.Values{}
			for k, v := range p.form {
				form[k] = v
			}
			if tok != "" {
				form.Set("csrf_token", tok)
			}
			r := c.do("POST", p.path, form)
			if r.status != http.StatusForbidden {
				t.Errorf("POST %s with %s token: %d", p.path, name, r.status)
			}
			checkHeaders(t, "refusal", r, true)
		}
	}
	if !strings.Contains(c.do("POST", "/logout", url.Values{}).body, "start again") {
		t.Error("refusal page does not explain how to start again")
	}
	// Nothing happened: still signed in, link active, password unchanged, no eve.
	if r := c.get("/account"); r.status != 200 {
		t.Fatalf("signed out by a forged POST: %d", r.status)
	}
	if l, _ := e.store.GetLink(context.Background(), link.ID); l.Status != store.LinkActive {
		t.Fatal("link revoked by a forged POST")
	}
	if _, err := e.store.GetAccountByEmail(context.Background(), "eve@example.com"); err == nil {
		t.Fatal("account created by a forged POST")
	}
	if _, err := e.ui.Identity().Authenticate(context.Background(), "ada@example.com", testPassword, "t"); err != nil {
		t.Fatal("password changed by a forged POST")
	}
}

func TestSignUpDoesNotRevealAccounts(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	first := c.post("/signup", "/signup", url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "password_repeat": {testPassword}})
	again := c.post("/signup", "/signup", url.Values{"email": {"ada@example.com"}, "password": {"a different passphrase"}, "password_repeat": {"a different passphrase"}})
	if first.status != 200 || again.status != 200 || first.body != again.body {
		t.Fatalf("new and existing address answered differently:\n%d %s\n---\n%d %s", first.status, first.body, again.status, again.body)
	}
	if !strings.Contains(first.body, "If this address was not registered yet") {
		t.Fatal("sign-up notice missing")
	}
	if r := c.get("/account"); r.status != http.StatusSeeOther {
		t.Fatal("sign-up signed in automatically")
	}
	for _, tc := range []struct{ name, email, pw, repeat, want string }{
		{"short", "bob@example.com", "short", "short", "at least 10 characters"},
		{"email as password", "bob@example.com", "bob@example.com", "bob@example.com", "must not be your email"},
		{"bad email", "bob", testPassword, testPassword, "valid email address"},
		{"mismatch", "bob@example.com", testPassword, testPassword + "x", "not the same"},
	} {
		r := c.post("/signup", "/signup", url.Values{"email": {tc.email}, "password": {tc.pw}, "password_repeat": {tc.repeat}})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, tc.want) {
			t.Errorf("%s: %d, body lacks %q", tc.name, r.status, tc.want)
		}
	}
}

func TestLoginAndSessionRotation(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{store: s})
		c := e.client()
		c.signUp("ada@example.com", testPassword)
		if r := c.logIn("ada@example.com", "wrong password here"); r.status != http.StatusUnauthorized ||
			!strings.Contains(r.body, "email address or password is not correct") || !strings.Contains(r.body, `value="ada@example.com"`) {
			t.Fatalf("wrong password: %d", r.status)
		}
		if r := c.logIn("nobody@example.com", "wrong password here"); r.status != http.StatusUnauthorized ||
			!strings.Contains(r.body, "email address or password is not correct") {
			t.Fatalf("unknown email: %d", r.status)
		}
		r := c.logIn("ada@example.com", testPassword)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/account" {
			t.Fatalf("login: %d %q", r.status, r.header.Get("Location"))
		}
		u, _ := url.Parse(e.srv.URL)
		first := c.hc.Jar.Cookies(u)
		if r := c.get("/account"); r.status != 200 || !strings.Contains(r.body, "ada@example.com") {
			t.Fatalf("account: %d", r.status)
		}
		// Signing in again rotates the session: the old cookie stops working.
		c.logIn("ada@example.com", testPassword)
		old := e.client()
		old.hc.Jar.SetCookies(u, first)
		if r := old.get("/account"); r.status != http.StatusSeeOther {
			t.Fatalf("old session still valid: %d", r.status)
		}
		if r := c.get("/account"); r.status != 200 {
			t.Fatalf("new session: %d", r.status)
		}
		// GET /login while signed in goes on.
		if r := c.get("/login?next=/account/activity"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/account/activity" {
			t.Fatalf("login while signed in: %d %q", r.status, r.header.Get("Location"))
		}
		// Logout: GET asks, POST does it.
		if r := c.get("/logout"); r.status != 200 || !strings.Contains(r.body, "Sign out") {
			t.Fatalf("GET /logout: %d", r.status)
		}
		if r := c.post("/logout", "/logout", url.Values{}); r.status != http.StatusSeeOther {
			t.Fatalf("POST /logout: %d", r.status)
		}
		if r := c.get("/account"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?next=%2Faccount" {
			t.Fatalf("after logout: %d %q", r.status, r.header.Get("Location"))
		}
		// The session is gone from the store, not only from the browser.
		if r := old.get("/account"); r.status != http.StatusSeeOther {
			t.Fatal("session survived logout")
		}
	})
}

// TestSignInAgain: ReauthRedirect's sign-in page is shown to a signed-in
// person, filled in with their address, and signing in there starts a new
// session whose sign-in time is the new auth time (CurrentSignIn).
func TestSignInAgain(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{store: s})
		c := e.client()
		c.signUpAndIn("ada@example.com", testPassword)
		u, _ := url.Parse(e.srv.URL)
		signIn := func() consent.SignIn {
			t.Helper()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, ck := range c.hc.Jar.Cookies(u) {
				req.AddCookie(ck)
			}
			si, ok := e.ui.CurrentSignIn(req)
			if !ok {
				t.Fatal("not signed in")
			}
			return si
		}
		first := e.clock.Now()
		if si := signIn(); !si.AuthTime.Equal(first) || si.Account.Email != "ada@example.com" {
			t.Fatalf("signed in at %v as %s, want %v", si.AuthTime, si.Account.Email, first)
		}
		e.clock.Advance(time.Hour)
		if si := signIn(); !si.AuthTime.Equal(first) {
			t.Fatalf("an hour on, auth time %v, want the sign-in %v", si.AuthTime, first)
		}

		next := "/test/authorize?redirect_uri=http://127.0.0.1:5555/cb&prompt=login"
		w := httptest.NewRecorder()
		e.ui.ReauthRedirect(w, httptest.NewRequest(http.MethodGet, "/oauth2/authorize", nil), next)
		target := w.Header().Get("Location")
		if w.Code != http.StatusSeeOther || !strings.HasPrefix(target, "/login?reauth=1&") {
			t.Fatalf("ReauthRedirect: %d %q", w.Code, target)
		}
		r := c.get(target)
		if r.status != http.StatusOK || !strings.Contains(r.body, `value="ada@example.com"`) ||
			!strings.Contains(r.body, "asks you to sign in again") || !strings.Contains(r.body, `name="next" value="`+html.EscapeString(next)+`"`) {
			t.Fatalf("sign-in page for a signed-in person: %d %s", r.status, r.body)
		}
		// The sign-in's redirect may go on to the client's origin.
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "http://127.0.0.1:5555") {
			t.Errorf("form-action of the sign-in page: %q", csp)
		}
		r = c.post(target, "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "next": {next}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != next {
			t.Fatalf("signing in again: %d %q", r.status, r.header.Get("Location"))
		}
		if si := signIn(); !si.AuthTime.Equal(first.Add(time.Hour)) {
			t.Fatalf("after signing in again, auth time %v, want %v", si.AuthTime, first.Add(time.Hour))
		}
		// Without reauth, the sign-in page still goes straight on.
		if r := c.get("/login?next=/account"); r.status != http.StatusSeeOther {
			t.Fatalf("GET /login signed in: %d", r.status)
		}
	})
}

func TestLoginThrottled(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	c.signUp("ada@example.com", testPassword)
	for i := range 5 {
		if r := c.logIn("ada@example.com", "not the password"); r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, r.status)
		}
	}
	r := c.logIn("ada@example.com", testPassword)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "60" ||
		!strings.Contains(r.body, "wait 1 minute") || !strings.Contains(r.body, "not locked") {
		t.Fatalf("throttled: %d %q", r.status, r.header.Get("Retry-After"))
	}
	e.clock.Advance(time.Minute)
	if r := c.logIn("ada@example.com", testPassword); r.status != http.StatusSeeOther {
		t.Fatalf("after the wait: %d", r.status)
	}
}

// With every password-hashing slot busy, sign-in and sign-up answer 503
// with Retry-After and a page that says to try again in a moment; when a
// slot frees, the same sign-in goes through.
func TestLoginBusy(t *testing.T) {
	pool := password.NewPool(1, 20*time.Millisecond)
	e := newEnv(t, envOpts{hasher: pool})
	c := e.client()
	c.signUp("ada@example.com", testPassword)
	release, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []resp{
		c.logIn("ada@example.com", testPassword),
		c.post("/signup", "/signup", url.Values{"email": {"bob@example.com"}, "password": {testPassword}, "password_repeat": {testPassword}}),
	} {
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" ||
			!strings.Contains(r.body, "Try again in a moment") || !strings.Contains(r.body, "Nothing was changed") {
			t.Fatalf("busy: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	if !strings.Contains(e.logs.String(), "password hashing slots busy") || strings.Contains(e.logs.String(), testPassword) {
		t.Fatalf("logs: %s", e.logs.String())
	}
	release()
	if r := c.logIn("ada@example.com", testPassword); r.status != http.StatusSeeOther {
		t.Fatalf("after a slot frees: %d", r.status)
	}
}

// A sign-in refused for busy hashing slots stores nothing, not even the
// passkey ceremony the sign-in page starts when passkeys are available
// (envOpts.localhost): the 503 page has no passkey button and the
// ceremonies table is unchanged, while the plain sign-in page still
// offers a passkey and stores its ceremony.
func TestRefusedSignInStartsNoCeremony(t *testing.T) {
	pool := password.NewPool(1, 20*time.Millisecond)
	e := newEnv(t, envOpts{hasher: pool, localhost: true})
	c := e.client()
	c.signUp("ada@example.com", testPassword)
	ceremonies := func() int64 {
		t.Helper()
		var n int64
		if err := e.store.DB().Table("webauthn_ceremonies").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := ceremonies()
	if r := c.get("/login"); r.status != http.StatusOK || !strings.Contains(r.body, "data-passkey") || ceremonies() != before+1 {
		t.Fatalf("sign-in page: %d, passkey button %v, %d ceremonies (had %d)", r.status, strings.Contains(r.body, "data-passkey"), ceremonies(), before)
	}
	release, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	form := url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "csrf_token": {c.csrf("/login")}} // the GET stores one
	before = ceremonies()
	r := c.do(http.MethodPost, "/login", form)
	if r.status != http.StatusServiceUnavailable || strings.Contains(r.body, "data-passkey") {
		t.Fatalf("busy: %d, passkey button %v", r.status, strings.Contains(r.body, "data-passkey"))
	}
	if n := ceremonies(); n != before {
		t.Fatalf("the refused sign-in stored %d passkey ceremonies", n-before)
	}
}

func TestOpenRedirectRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	c.signUp("ada@example.com", testPassword)
	for _, next := range []string{
		"https://evil.example/", "//evil.example/x", "/\\evil.example", "\\\\evil.example", "javascript:alert(1)",
		"http:/evil.example", "/\t/evil.example", "/%0d%0aSet-Cookie:x=y", "evil.example", " /account", "/x\r\nLocation: //evil",
		"data:text/html,hi", "///evil.example",
	} {
		r := c.post("/login", "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "next": {next}})
		loc := r.header.Get("Location")
		if r.status != http.StatusSeeOther || (loc != "/account" && !strings.HasPrefix(loc, "/%")) {
			t.Errorf("next %q: %d → %q", next, r.status, loc)
		}
		if consentui.SafeNext(next) && !strings.HasPrefix(next, "/%") {
			t.Errorf("SafeNext(%q) = true", next)
		}
		// LoginRedirect drops an unsafe next.
		rec := httptest.NewRecorder()
		e.ui.LoginRedirect(rec, httptest.NewRequest("GET", "/x", nil), next)
		if l := rec.Header().Get("Location"); l != "/login" && !strings.HasPrefix(next, "/%") {
			t.Errorf("LoginRedirect(%q) → %q", next, l)
		}
		c.post("/logout", "/account", url.Values{})
	}
	// A tampered next on the login page is explained.
	if r := c.get("/login?next=https://evil.example"); !strings.Contains(r.body, "pointed outside Linkslot") || strings.Contains(r.body, "evil.example") {
		t.Fatalf("tampered next not explained or echoed")
	}
	// A same-origin next survives sign-in.
	r := c.post("/login?next=/account/activity?page=2", "/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "next": {"/account/activity?page=2"}})
	if r.header.Get("Location") != "/account/activity?page=2" {
		t.Fatalf("safe next: %q", r.header.Get("Location"))
	}
}

func TestConsentPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	// Not signed in: to the sign-in page and back.
	r := c.get("/test/authorize?redirect_uri=http://127.0.0.1:5555/cb")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?next="+url.QueryEscape("/test/authorize?redirect_uri=http://127.0.0.1:5555/cb") {
		t.Fatalf("login redirect: %d %q", r.status, r.header.Get("Location"))
	}
	// The sign-in page for an authorize request lets the form's redirects reach the client.
	if csp := c.get(r.header.Get("Location")).header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:5555;") {
		t.Fatalf("login CSP: %q", csp)
	}
	c.signUpAndIn("ada@example.com", testPassword)
	r = c.get("/test/authorize?redirect_uri=http://127.0.0.1:5555/cb")
	for _, want := range []string{"Trip Planner", "127.0.0.1:5555", "ada@example.com", "See your bookings and check availability",
		"Book, move and cancel appointments, each only after you confirm", `value="allow"`, `value="deny"`, ">Allow<", ">Deny<",
		`name="state" value="st-123"`, `name="client_id" value="agent"`, `name="csrf_token"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:5555;") {
		t.Errorf("consent CSP: %q", csp)
	}
	tok := csrfRE.FindStringSubmatch(r.body)[1]
	form := url.Values{"csrf_token": {tok}, "decision": {"deny"}, "client_id": {"agent"}, "state": {"st-123"}, "redirect_uri": {"http://127.0.0.1:5555/cb"}}
	r = c.do("POST", "/test/authorize", form)
	if r.status != http.StatusFound || !strings.Contains(r.header.Get("Location"), "error=access_denied") {
		t.Fatalf("deny: %d %q", r.status, r.header.Get("Location"))
	}

	// "Use another account" signs out and comes back to the same request.
	r = c.get("/test/authorize?redirect_uri=http://127.0.0.1:5555/cb")
	m := regexp.MustCompile(`name="next" value="([^"]+)"`).FindStringSubmatch(r.body)
	if m == nil || !strings.Contains(r.body, "Use another account") {
		t.Fatal("no way to switch accounts on the consent page")
	}
	next := html.UnescapeString(m[1])
	r = c.do("POST", "/logout", url.Values{"csrf_token": {tok}, "next": {next}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?signed_out=1&next="+url.QueryEscape(next) {
		t.Fatalf("switch account: %d %q", r.status, r.header.Get("Location"))
	}
	r = c.get(r.header.Get("Location"))
	if !strings.Contains(r.body, "You have signed out.") || !strings.Contains(r.body, `name="next"`) {
		t.Fatal("sign-in page after switching")
	}
}

func TestConnectionsAndDisconnect(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{store: s})
		ctx := context.Background()
		ada := e.client()
		adaAcct := ada.signUpAndIn("ada@example.com", testPassword)
		bob := e.client()
		bobAcct := bob.signUpAndIn("bob@example.com", testPassword)
		la, _ := s.UpsertLink(ctx, adaAcct.ID, "agent", []string{"openid", "bookings:write", "bookings:read"}, e.clock.Now())
		lb, _ := s.UpsertLink(ctx, bobAcct.ID, "agent", []string{"bookings:read"}, e.clock.Now())
		if r := ada.get("/account/connections"); !strings.Contains(r.body, "Not used yet") {
			t.Error("an unused link does not say so")
		}
		s.TouchLink(ctx, la.ID, e.clock.Now().Add(3*time.Minute))
		s.CreateTokenSession(ctx, store.TokenSession{Kind: store.KindRefreshToken, SignatureHash: "ada-rt", RequestID: "r1", ClientID: "agent",
			AccountID: adaAcct.ID, LinkID: la.ID, Active: true, Request: []byte("{}"), ExpiresAt: e.clock.Now().Add(time.Hour), CreatedAt: e.clock.Now()})

		r := ada.get("/account/connections")
		for _, want := range []string{"Trip Planner", "See your bookings and check availability", "Book, move and cancel appointments",
			`value="` + la.ID + `"`, ">Disconnect<", "Connected on", "Last used"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("connections page lacks %q", want)
			}
		}
		if strings.Contains(r.body, lb.ID) {
			t.Fatal("ada sees bob's link")
		}
		// Ada cannot disconnect Bob's link, even with her own valid token.
		r = ada.post("/account/connections", "/account/connections/disconnect", url.Values{"link_id": {lb.ID}})
		if r.status != http.StatusNotFound {
			t.Fatalf("disconnect another person's link: %d", r.status)
		}
		if l, _ := s.GetLink(ctx, lb.ID); l.Status != store.LinkActive {
			t.Fatal("bob's link was revoked")
		}
		r = ada.post("/account/connections", "/account/connections/disconnect", url.Values{"link_id": {la.ID}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/account/connections?disconnected=1" {
			t.Fatalf("disconnect: %d %q", r.status, r.header.Get("Location"))
		}
		if l, _ := s.GetLink(ctx, la.ID); l.Status != store.LinkRevoked {
			t.Fatal("link not revoked")
		}
		if ts, _ := s.GetTokenSession(ctx, store.KindRefreshToken, "ada-rt"); ts.Active {
			t.Fatal("refresh token still active")
		}
		r = ada.get("/account/connections?disconnected=1")
		if !strings.Contains(r.body, "was disconnected") || !strings.Contains(r.body, "No apps are connected") {
			t.Fatal("connections page after disconnect")
		}
	})
}

func TestActivityPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	if r := c.get("/account/activity"); !strings.Contains(r.body, "No activity yet") {
		t.Fatal("empty activity page")
	}
	link, _ := e.store.UpsertLink(ctx, acct.ID, "agent", []string{"bookings:write"}, e.clock.Now())
	tools := []string{"create_my_booking", "reschedule_my_booking", "cancel_my_booking"}
	for i := range 45 {
		e.clock.Advance(time.Minute)
		if err := e.store.AddActivity(ctx, store.Activity{ID: store.NewID("act"), AccountID: acct.ID, LinkID: link.ID, ClientID: "agent",
			Tool: tools[i%3], Arguments: []byte("{}"), Summary: "Haircut at Studio <b>" + string(rune('A'+i%26)) + "</b> #" + itoa(i),
			ConfirmationText: "yes, book it #" + itoa(i), IdempotencyKey: "key-0123456789abcdef-" + itoa(i), Outcome: []byte("{}"),
			CreatedAt: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	r := c.get("/account/activity")
	if !strings.Contains(r.body, "#44") || strings.Contains(r.body, "#24<") || !strings.Contains(r.body, "Cancelled an appointment") ||
		!strings.Contains(r.body, "yes, book it #44") || !strings.Contains(r.body, "through <bdi>Trip Planner</bdi>") {
		t.Fatal("page 1 content")
	}
	if strings.Index(r.body, "#44") > strings.Index(r.body, "#43") {
		t.Fatal("not newest first")
	}
	if strings.Contains(r.body, "<b>") || !strings.Contains(r.body, "&lt;b&gt;") {
		t.Fatal("summary not escaped")
	}
	if !strings.Contains(r.body, `href="/account/activity?page=2"`) || strings.Contains(r.body, "Newer") {
		t.Fatal("pager on page 1")
	}
	r = c.get("/account/activity?page=3")
	if !strings.Contains(r.body, "#4 ") && !strings.Contains(r.body, "#0") || strings.Contains(r.body, "Older") || !strings.Contains(r.body, "Newer") {
		t.Fatal("page 3")
	}
	if r := c.get("/account/activity?page=-4"); r.status != 200 || !strings.Contains(r.body, "#44") {
		t.Fatal("bad page number")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestChangePassword(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.client()
	c.signUpAndIn("ada@example.com", testPassword)
	other := e.client()
	other.logIn("ada@example.com", testPassword)
	const next = "a brand new passphrase"
	if r := c.post("/account/password", "/account/password", url.Values{"current_password": {"nope nope nope"}, "new_password": {next}, "new_password_repeat": {next}}); r.status != 422 ||
		!strings.Contains(r.body, "current password is not correct") {
		t.Fatalf("wrong current: %d", r.status)
	}
	if r := c.post("/account/password", "/account/password", url.Values{"current_password": {testPassword}, "new_password": {"short"}, "new_password_repeat": {"short"}}); r.status != 422 {
		t.Fatalf("weak: %d", r.status)
	}
	r := c.post("/account/password", "/account/password", url.Values{"current_password": {testPassword}, "new_password": {next}, "new_password_repeat": {next}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("change: %d %s", r.status, r.body)
	}
	if r := c.get("/account?password_changed=1"); r.status != 200 || !strings.Contains(r.body, "password has been changed") {
		t.Fatalf("this browser: %d", r.status)
	}
	if r := other.get("/account"); r.status != http.StatusSeeOther {
		t.Fatalf("other browser still signed in: %d", r.status)
	}
	if _, err := e.ui.Identity().Authenticate(context.Background(), "ada@example.com", next, "t"); err != nil {
		t.Fatal(err)
	}
}

func TestErrorPageIsSafe(t *testing.T) {
	e := newEnv(t, envOpts{})
	rec := httptest.NewRecorder()
	e.ui.RenderError(rec, httptest.NewRequest("GET", "/", nil), 400, "Bad <request>", `<script>alert(1)</script>`)
	if rec.Code != 400 || strings.Contains(rec.Body.String(), "<script>") || !strings.Contains(rec.Body.String(), "&lt;script&gt;") {
		t.Fatalf("error page: %d %s", rec.Code, rec.Body)
	}
	checkHeaders(t, "RenderError", resp{rec.Code, rec.Header(), rec.Body.String()}, true)
}

func TestNoPasswordInPagesOrLogs(t *testing.T) {
	e := newEnv(t, envOpts{argon2: true, throttle: identity.ThrottlePolicy{AccountLimit: 3}})
	c := e.client()
	const pw, pw2, wrong = "Leaky-Canary-Pass-1", "Leaky-Canary-Pass-2", "Leaky-Canary-Wrong-3"
	c.signUp("ada@example.com", pw)
	c.post("/signup", "/signup", url.Values{"email": {"ada@example.com"}, "password": {pw}, "password_repeat": {pw}})
	c.post("/signup", "/signup", url.Values{"email": {"bob@example.com"}, "password": {pw}, "password_repeat": {pw + "x"}})
	for range 4 {
		c.logIn("ada@example.com", wrong)
	}
	e.clock.Advance(time.Hour)
	c.logIn("ada@example.com", pw)
	c.post("/account/password", "/account/password", url.Values{"current_password": {wrong}, "new_password": {pw2}, "new_password_repeat": {pw2}})
	c.post("/account/password", "/account/password", url.Values{"current_password": {pw}, "new_password": {pw2}, "new_password_repeat": {pw2}})
	c.do("POST", "/login", url.Values{"email": {"ada@example.com"}, "password": {pw2}}) // no CSRF
	c.get("/account")
	u, _ := url.Parse(e.srv.URL)
	var sessionValues []string
	for _, ck := range c.hc.Jar.Cookies(u) {
		sessionValues = append(sessionValues, ck.Value)
	}
	secrets := append([]string{pw, pw2, wrong, "Leaky-Canary"}, sessionValues...)
	for i, b := range c.bodies {
		for _, s := range secrets {
			if strings.Contains(b, s) {
				t.Errorf("page %d contains a secret %q", i, s[:6])
			}
		}
	}
	logs := e.logs.String()
	if logs == "" {
		t.Fatal("no log lines captured")
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("logs contain a secret %q", s[:6])
		}
	}
}

// mailOffMailer answers what the outbox's account mailer answers with
// LINKSLOT_SMTP_URL=off.
type mailOffMailer struct{}

func (mailOffMailer) QueueMail(context.Context, identity.MailTx, identity.Mail) error {
	return identity.ErrMailUnavailable
}
func (mailOffMailer) MailOff() bool { return true }

// TestSignUpWithMailOff: on a server that cannot send e-mail the sign-up
// page says so and what to do instead, creates nothing, and answers an
// address that has an account the same way.
func TestSignUpWithMailOff(t *testing.T) {
	e := newEnv(t, envOpts{mailer: mailOffMailer{}})
	ctx := context.Background()
	now := time.Now().UTC()
	if err := e.store.CreateAccount(ctx, store.Account{ID: store.NewID("acct"), Email: "known@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, addr := range []string{"new@example.com", "known@example.com"} {
		c := e.client()
		r := c.post("/signup", "/signup", url.Values{"email": {addr}, "password": {"a long passphrase"}, "password_repeat": {"a long passphrase"}})
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "cannot send e-mail") || !strings.Contains(r.body, "Nothing was created") {
			t.Fatalf("sign-up of %s with e-mail off: %d %s", addr, r.status, r.body)
		}
		bodies = append(bodies, strings.ReplaceAll(r.body, addr, ""))
	}
	if _, err := e.store.GetAccountByEmail(ctx, "new@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an account was created with e-mail off: %v", err)
	}
	strip := func(b string) string { return csrfRE.ReplaceAllString(b, "") }
	if strip(bodies[0]) != strip(bodies[1]) {
		t.Error("the page tells a known address from a new one")
	}
}
