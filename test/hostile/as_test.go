package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/test/cluster"
)

func TestOversizedFormBodies(t *testing.T) {
	x := newSys(t)
	big := "x=" + strings.Repeat("a", 11<<20) // past net/http's own 10 MiB form limit
	var findings []string
	for _, path := range []string{"/oauth2/token", "/oauth2/revoke", "/oauth2/introspect", "/oauth2/authorize", "/login", "/signup", "/logout",
		"/account/connections/disconnect", "/account/password"} {
		req, _ := http.NewRequest(http.MethodPost, x.as.URL+path, strings.NewReader(big))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		start := time.Now()
		resp, err := x.agent.Browser.Do(req)
		if err != nil {
			// The server may close the connection after refusing: acceptable
			// only if it did not answer 5xx first.
			t.Logf("%s: %v", path, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Logf("POST %s with 11 MiB → %d in %s", path, resp.StatusCode, time.Since(start).Round(time.Millisecond))
		if resp.StatusCode >= 500 {
			t.Errorf("POST %s with 11 MiB answered %d", path, resp.StatusCode)
		} else if resp.StatusCode != http.StatusRequestEntityTooLarge {
			findings = append(findings, fmt.Sprintf("%s→%d", path, resp.StatusCode))
		}
	}
	x.alive()
	if len(findings) > 0 {
		t.Errorf("oversized form posts to the authorization server are not answered 413 (docs/reference.md: a limit, 413): %s", strings.Join(findings, ", "))
	}
}

// payloads are SQL and HTML injection attempts; every one must be answered
// safely, stored verbatim and rendered escaped.
var payloads = []string{
	`'; DROP TABLE bookings; --`,
	`" OR 1=1 --`,
	`<script>alert("x")</script>`,
	`<img src=x onerror=alert(1)>`,
	`%_\`,
	`Robert'); DELETE FROM activities WHERE ('1'='1`,
	"{{.Secret}} ${7*7} end",
	`</textarea><svg/onload=alert(1)>`,
}

func TestInjectionInSearch(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) { injectionInSearch(t, newSysOn(t, s)) })
}

func injectionInSearch(t *testing.T, x *sys) {
	for _, p := range payloads {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"search_bookable_business", map[string]any{"query": p}},
			{"search_bookable_business", map[string]any{"query": "hair", "city": p}},
			{"check_business_availability", map[string]any{"business_reference": p}},
			{"check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": p, "local_date": nextDay(3)}},
			{"check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut", "local_date": p}},
			{"get_my_booking", map[string]any{"booking_reference": p}},
			{"search_my_bookings", map[string]any{"status": p}},
		} {
			a := x.call(c.tool, c.args)
			if a.Kind == "server_error" || a.Status >= 500 || a.Kind == "transport" || a.Kind == "malformed" {
				t.Errorf("%s %v answered %s (%d)", c.tool, c.args, a.Kind, a.Status)
			}
			if a.Kind == "ok" && c.tool == "search_bookable_business" {
				if rs, _ := a.Result["results"].([]any); len(rs) > 0 && c.args["city"] == nil {
					t.Errorf("the injection %q matched %d businesses", p, len(rs))
				}
			}
		}
	}
	// The tables are all still there.
	var n int
	if err := x.store.DB().Raw("SELECT count(*) FROM bookings").Scan(&n).Error; err != nil {
		t.Fatalf("bookings table: %v", err)
	}
	x.alive()
}

// TestInjectionStoredVerbatimAndEscaped books with each payload as notes
// and confirmation text, cancels with it as the reason, and checks the
// database holds the exact text and the Activity page shows it escaped.
func TestInjectionStoredVerbatimAndEscaped(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) { injectionStored(t, newSysOn(t, s)) })
}

func injectionStored(t *testing.T, x *sys) {
	// A bidi override is not stored at all (docs/reference.md §4): it is
	// refused at the door, naming the argument.
	slot := firstSlot(t, x, nextDay(4))
	if r := x.call("create_my_booking", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
		"staff_reference": slot.staff, "starts_at": slot.at, "notes": "nice \u202e end"}); r.Kind != "invalid_argument" || testkit.FindString(r.Result, "field") != "notes" {
		t.Errorf("notes with U+202E: %s %v, want invalid_argument on notes", r.Kind, r.Result)
	}
	for i, p := range payloads {
		slot := firstSlot(t, x, nextDay(5+i))
		args := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
			"staff_reference": slot.staff, "starts_at": slot.at, "notes": p}
		sum := x.call("create_my_booking", args)
		if sum.Kind != "confirmation_required" {
			t.Fatalf("summary with notes %q: %s", p, sum.Kind)
		}
		full := testkit.ConfirmedArgs(args, testkit.FindString(sum.Result, "confirmed_summary"), fmt.Sprintf("hostile-key-%04d-abcdef", i), "yes "+p)
		ans := x.call("create_my_booking", full)
		if ans.Kind != "ok" {
			t.Fatalf("create with notes %q: %s %v", p, ans.Kind, ans.Result)
		}
		ref := testkit.FindString(ans.Result, "booking_reference")
		got := x.call("get_my_booking", map[string]any{"booking_reference": ref})
		if testkit.FindString(got.Result, "notes") != p {
			t.Errorf("get_my_booking notes = %q, want %q", testkit.FindString(got.Result, "notes"), p)
		}
		var notes string
		x.store.DB().Raw("SELECT notes FROM bookings WHERE reference = ?", ref).Scan(&notes)
		if notes != p {
			t.Errorf("stored notes = %q, want %q verbatim", notes, p)
		}
		var conf string
		x.store.DB().Raw("SELECT confirmation_text FROM activities WHERE idempotency_key = ?", full["idempotency_key"]).Scan(&conf)
		if conf != "yes "+p {
			t.Errorf("stored confirmation text = %q, want %q", conf, "yes "+p)
		}
		// Cancel with the payload as the reason.
		grant := testkit.FindString(got.Result, "grant")
		cargs := map[string]any{"booking_reference": ref, "grant": grant, "reason": p}
		csum := x.call("cancel_my_booking", cargs)
		if csum.Kind != "confirmation_required" {
			t.Fatalf("cancel summary: %s %v", csum.Kind, csum.Result)
		}
		cargs = testkit.ConfirmedArgs(cargs, testkit.FindString(csum.Result, "confirmed_summary"), fmt.Sprintf("hostile-cancel-%04d-abcdef", i), "ok")
		if c := x.call("cancel_my_booking", cargs); c.Kind != "ok" {
			t.Fatalf("cancel with reason %q: %s %v", p, c.Kind, c.Result)
		}
		var reason string
		x.store.DB().Raw("SELECT cancel_reason FROM bookings WHERE reference = ?", ref).Scan(&reason)
		if reason != p {
			t.Errorf("stored cancel reason = %q, want %q", reason, p)
		}
	}
	// The Activity page renders every payload escaped.
	resp, err := x.agent.Browser.Get(x.as.URL + "/account/activity")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("activity page: %d", resp.StatusCode)
	}
	for _, raw := range []string{"<script>alert", "<img src=x", "<svg/onload", "</textarea>"} {
		if bytes.Contains(page, []byte(raw)) {
			t.Errorf("the Activity page contains %q unescaped", raw)
		}
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;")) {
		t.Errorf("the Activity page does not show the escaped payload")
	}
	// Sign-in echoes the email escaped.
	form := url.Values{"email": {`"><script>alert(1)</script>`}, "password": {"wrong"}}
	resp, err = x.agent.Browser.Get(x.as.URL + "/login")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for k, v := range hiddenOf(string(b)) {
			form[k] = v
		}
		resp, err = x.agent.Browser.PostForm(x.as.URL+"/login", form)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(b, []byte("<script>alert(1)")) {
		t.Error("the sign-in page echoes the email unescaped")
	}
	x.alive()
}

func hiddenOf(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	return v
}

// offsite reports whether a Location leaves the server and the registered
// loopback callback.
func offsite(asURL, loc string) bool {
	if loc == "" {
		return false
	}
	u, err := url.Parse(loc)
	if err != nil {
		return true
	}
	if u.Scheme == "" && u.Host == "" {
		return strings.HasPrefix(u.Path, "//") || strings.Contains(loc, `\`)
	}
	as, _ := url.Parse(asURL)
	if u.Host == as.Host {
		return false
	}
	h := u.Hostname()
	loop := h == "127.0.0.1" || h == "localhost" || h == "::1"
	return !(loop && u.Scheme == "http" && u.Path == "/callback" && u.User == nil)
}

func TestOpenRedirects(t *testing.T) {
	x := newSys(t)
	// A signed-in browser with remembered consent: a valid request
	// redirects at once, so every refusal is visible.
	noFollow := &http.Client{Jar: x.agent.Browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authz := func(redirect string) (int, string) {
		q := url.Values{"response_type": {"code"}, "client_id": {demo.ClientID}, "redirect_uri": {redirect}, "scope": {"openid"},
			"state": {"state-12345678"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())},
			"code_challenge_method": {"S256"}}
		resp, err := noFollow.Get(x.as.URL + "/oauth2/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	if st, loc := authz("http://127.0.0.1:9999/callback"); st/100 != 3 || !strings.Contains(loc, "code=") {
		t.Fatalf("the valid loopback redirect answered %d %q", st, loc)
	}
	for _, r := range []string{
		"https://evil.example/callback", "http://evil.example/callback", "http://127.0.0.1.evil.example/callback",
		"http://127.0.0.1@evil.example/callback", "http://evil.example@127.0.0.1/callback", "http://127.0.0.1:9999@evil.example/callback",
		"http://127.0.0.1/callback/../evil", "http://127.0.0.1/callback/", "http://127.0.0.1/callbackx", "http://127.0.0.1/CALLBACK",
		"http://127.0.0.1/callback?next=https://evil.example", "http://127.0.0.1/callback#https://evil.example",
		"//evil.example/callback", "javascript:alert(1)//127.0.0.1/callback", "data:text/html,<script>alert(1)</script>",
		"http://127.0.0.1%2F@evil.example/callback", "http://127.0.0.1\\@evil.example/callback", "http://[::1]@evil.example/callback",
		"https://127.0.0.1/callback", "http://localhost.evil.example/callback", "http://0x7f000001/callback", "http://127.1/callback",
		"http://127.0.0.1/callback\r\nLocation: https://evil.example", strings.Repeat("http://127.0.0.1/callback", 500),
	} {
		st, loc := authz(r)
		if offsite(x.as.URL, loc) {
			t.Errorf("redirect_uri %q: %d redirected to %q", r, st, loc)
		}
		if st/100 == 3 && strings.Contains(loc, "code=") && r != "http://127.0.0.1/callback" {
			t.Errorf("redirect_uri %q was accepted (%d → %q)", r, st, loc)
		}
	}
	// next on the sign-in, sign-up and sign-out pages.
	evil := []string{"//evil.example", "https://evil.example", "/\\evil.example", "\\\\evil.example", "http:evil.example",
		"/%2F%2Fevil.example", "/\t/evil.example", "javascript:alert(1)", "//evil.example/%2e%2e", "/login?next=https://evil.example",
		"https:/evil.example", " //evil.example", "/\r\n//evil.example"}
	for _, n := range evil {
		// Signed in, GET /login?next= redirects straight away.
		resp, err := noFollow.Get(x.as.URL + "/login?next=" + url.QueryEscape(n))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); offsite(x.as.URL, loc) {
			t.Errorf("GET /login?next=%q redirected to %q", n, loc)
		}
		// Signing in (a fresh browser) with next.
		jar, _ := cookiejar.New(nil)
		b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err = b.Get(x.as.URL + "/login?next=" + url.QueryEscape(n))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		form := hiddenOf(string(body))
		form.Set("next", n)
		form.Set("email", demo.AccountEmail)
		form.Set("password", cluster.DemoPassword)
		resp, err = b.PostForm(x.as.URL+"/login", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); offsite(x.as.URL, loc) || resp.StatusCode/100 != 3 {
			t.Errorf("POST /login next=%q: %d → %q", n, resp.StatusCode, loc)
		}
		// Sign-out with next.
		resp, err = b.Get(x.as.URL + "/account")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			f := hiddenOf(string(body))
			f.Set("next", n)
			if resp, err = b.PostForm(x.as.URL+"/logout", f); err == nil {
				resp.Body.Close()
				if loc := resp.Header.Get("Location"); offsite(x.as.URL, loc) {
					t.Errorf("POST /logout next=%q redirected to %q", n, loc)
				}
			}
		}
		// Sign-up page with next (GET only: no account is created).
		resp, err = b.Get(x.as.URL + "/signup?next=" + url.QueryEscape(n))
		if err == nil {
			resp.Body.Close()
			if loc := resp.Header.Get("Location"); offsite(x.as.URL, loc) {
				t.Errorf("GET /signup?next=%q redirected to %q", n, loc)
			}
		}
	}
	x.alive()
}

// TestCSRFOnEveryForm posts each form of the pages without its CSRF token,
// and with another session's token, and checks nothing happened.
func TestCSRFOnEveryForm(t *testing.T) {
	x := newSys(t)
	ctx := context.Background()
	// A second person's browser supplies a foreign (valid-looking) token.
	other, err := cluster.Link(ctx, x.asProc, demo.AdminEmail, cluster.DemoPassword)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := other.Browser.Get(x.as.URL + "/account")
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	foreignCSRF := ""
	for k, v := range hiddenOf(string(ob)) {
		if strings.Contains(strings.ToLower(k), "csrf") {
			foreignCSRF = v[0]
		}
	}
	if foreignCSRF == "" {
		t.Fatal("no CSRF field on the account page")
	}
	link, err := x.store.GetActiveLink(ctx, mustAccountID(t, x), demo.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{Jar: x.agent.Browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	v := oauth2.GenerateVerifier()
	forms := []struct {
		path string
		form url.Values
	}{
		{"/login", url.Values{"email": {demo.AccountEmail}, "password": {cluster.DemoPassword}}},
		{"/signup", url.Values{"email": {"csrf-victim@example.com"}, "password": {"a-long-password-1"}, "password_repeat": {"a-long-password-1"}}},
		{"/logout", url.Values{}},
		{"/account/password", url.Values{"current_password": {cluster.DemoPassword}, "new_password": {"hijacked-password-1"}, "new_password_repeat": {"hijacked-password-1"}}},
		{"/account/connections/disconnect", url.Values{"link_id": {link.ID}}},
		{"/oauth2/authorize", url.Values{"decision": {"allow"}, "response_type": {"code"}, "client_id": {demo.ClientID},
			"redirect_uri": {"http://127.0.0.1:9/callback"}, "scope": {"openid profile email"}, "state": {"state-12345678"},
			"code_challenge": {oauth2.S256ChallengeFromVerifier(v)}, "code_challenge_method": {"S256"}}},
	}
	for _, f := range forms {
		for _, variant := range []string{"missing", "foreign", "empty"} {
			form := url.Values{}
			for k, vs := range f.form {
				form[k] = vs
			}
			switch variant {
			case "foreign":
				form.Set("csrf_token", foreignCSRF)
				form.Set("_csrf", foreignCSRF)
			case "empty":
				form.Set("csrf_token", "")
				form.Set("_csrf", "")
			}
			req, _ := http.NewRequest(http.MethodPost, x.as.URL+f.path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "https://evil.example")
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			t.Logf("POST %s (%s CSRF) → %d %s", f.path, variant, resp.StatusCode, loc)
			if resp.StatusCode/100 == 2 || strings.Contains(loc, "code=") || (resp.StatusCode/100 == 3 && f.path != "/oauth2/authorize") {
				t.Errorf("POST %s with a %s CSRF token was accepted: %d → %q", f.path, variant, resp.StatusCode, loc)
			}
		}
	}
	// Nothing happened: still signed in, same password, link active, no account created.
	if a := x.call("search_my_bookings", map[string]any{}); a.Kind != "ok" {
		t.Errorf("the link stopped working: %s", a.Kind)
	}
	if _, err := x.store.GetActiveLink(ctx, mustAccountID(t, x), demo.ClientID); err != nil {
		t.Errorf("the link was disconnected: %v", err)
	}
	if _, err := x.store.GetAccountByEmail(ctx, "csrf-victim@example.com"); err == nil {
		t.Error("an account was created without a CSRF token")
	}
	if _, err := cluster.Link(ctx, x.asProc, demo.AccountEmail, cluster.DemoPassword); err != nil {
		t.Errorf("the password no longer works: %v", err)
	}
	resp, err = x.agent.Browser.Get(x.as.URL + "/account")
	if err != nil || resp.Request.URL.Path != "/account" {
		t.Errorf("the session was signed out by a cross-site post")
	}
	if resp != nil {
		resp.Body.Close()
	}
}

func mustAccountID(t *testing.T, x *sys) string {
	a, err := x.store.GetAccountByEmail(context.Background(), demo.AccountEmail)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// TestNULCharacterInFreeText sends U+0000 in every free-text argument.
// PostgreSQL cannot store or compare it in text, so every backend refuses
// it as an argument problem (invalid_argument naming the field), never
// server_error ("retry the same call").
func TestNULCharacterInFreeText(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		x := newSysOn(t, s)
		slot := firstSlot(t, x, nextDay(4))
		const nul = "a\u0000b"
		var findings []string
		for _, c := range []struct {
			tool, field string
			args        map[string]any
		}{
			{"search_bookable_business", "query", map[string]any{"query": nul}},
			{"search_bookable_business", "city", map[string]any{"query": "hair", "city": nul}},
			{"check_business_availability", "business_reference", map[string]any{"business_reference": nul}},
			{"check_business_availability", "service_reference", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": nul, "local_date": nextDay(4)}},
			{"get_my_booking", "booking_reference", map[string]any{"booking_reference": nul}},
			{"check_my_booking_availability", "booking_reference", map[string]any{"booking_reference": nul, "local_date": nextDay(4)}},
			{"create_my_booking", "staff_reference", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
				"staff_reference": nul, "starts_at": slot.at}},
			{"create_my_booking", "notes (confirmed)", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
				"staff_reference": slot.staff, "starts_at": slot.at, "notes": nul}},
		} {
			a := x.call(c.tool, c.args)
			if c.field == "notes (confirmed)" && a.Kind == "confirmation_required" {
				full := testkit.ConfirmedArgs(c.args, testkit.FindString(a.Result, "confirmed_summary"), "nul-notes-key-0123456789", "yes")
				a = x.call(c.tool, full)
				if a.Kind == "ok" {
					var notes string
					x.store.DB().Raw("SELECT notes FROM bookings WHERE reference = ?", testkit.FindString(a.Result, "booking_reference")).Scan(&notes)
					t.Logf("notes with NUL stored as %q", notes)
				}
			}
			t.Logf("%s %s with U+0000 → %s", c.tool, c.field, a.Kind)
			field, _ := strings.CutSuffix(c.field, " (confirmed)")
			if a.Kind != "invalid_argument" || testkit.FindString(a.Result, "field") != field {
				findings = append(findings, c.tool+"."+c.field+"→"+a.Kind+" (field "+testkit.FindString(a.Result, "field")+")")
			}
		}
		x.alive()
		if len(findings) > 0 {
			t.Errorf("on %s, U+0000 in a text argument is not answered invalid_argument naming the field (resourceserver/internal/tools controlChars): %s",
				s.Dialect(), strings.Join(findings, ", "))
		}
	})
}

// TestAdminCSRFAndCrossOrigin posts the admin pages' forms without a CSRF
// token, and calls the admin API with the administrator's session from a
// foreign origin: nothing may change.
func TestAdminCSRFAndCrossOrigin(t *testing.T) {
	x := newSys(t)
	ctx := context.Background()
	adm, err := cluster.Link(ctx, x.asProc, demo.AdminEmail, cluster.DemoPassword)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{Jar: adm.Browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, ctype, body string, hdr map[string]string) int {
		req, _ := http.NewRequest(method, x.as.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// The session works: the refusals below are about CSRF, not sign-in.
	if st := do(http.MethodGet, "/admin/api/clients", "", "", nil); st != 200 {
		t.Fatalf("admin API with the admin's session answered %d", st)
	}
	if st := do(http.MethodGet, "/admin/clients", "", "", nil); st != 200 {
		t.Fatalf("admin pages with the admin's session answered %d", st)
	}
	form := "application/x-www-form-urlencoded"
	cross := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	for _, c := range []struct{ path, body string }{
		{"/admin/clients/" + demo.ClientID + "/disable", ""},
		{"/admin/clients/" + demo.ClientID + "/delete", ""},
		{"/admin/clients/" + demo.ClientID + "/rotate-secret", ""},
		{"/admin/clients/" + demo.ClientID, "name=Hijacked&redirect_uris=https://evil.example/cb"},
		{"/admin/clients", "id=csrf-client&name=CSRF&redirect_uris=https://evil.example/cb&allowed_scopes=openid"},
		{"/admin/businesses/biz-brightcut-barbers/agent-booking", "enabled=false"},
		{"/admin/catalog", "format=json&catalog=%5B%5D"},
	} {
		for _, variant := range []string{"no token", "cross-site"} {
			h := map[string]string{}
			if variant == "cross-site" {
				h = cross
			}
			st := do(http.MethodPost, c.path, form, c.body, h)
			t.Logf("admin page POST %s (%s) → %d", c.path, variant, st)
			if st/100 == 2 || st/100 == 3 {
				t.Errorf("admin page POST %s (%s) answered %d", c.path, variant, st)
			}
		}
	}
	for _, c := range []struct{ method, path, ctype, body string }{
		{http.MethodPost, "/admin/api/clients/" + demo.ClientID + "/disable", "", ""},
		{http.MethodPost, "/admin/api/clients/" + demo.ClientID + "/disable", "text/plain", "{}"},
		{http.MethodPost, "/admin/api/clients", "text/plain", `{"id":"csrf-api-client","name":"x","redirect_uris":["https://evil.example/cb"],"allowed_scopes":["openid"]}`},
		{http.MethodPost, "/admin/api/clients", form, `id=csrf-api-client`},
		{http.MethodDelete, "/admin/api/clients/" + demo.ClientID, "", ""},
		{http.MethodPost, "/admin/api/users", "text/plain", `{"email":"csrf-admin@example.com","password":"a-long-password-1","admin":true}`},
		{http.MethodPost, "/admin/api/businesses/biz-brightcut-barbers/agent-booking", "text/plain", `{"enabled":false}`},
	} {
		st := do(c.method, c.path, c.ctype, c.body, cross)
		t.Logf("admin API %s %s cross-site → %d", c.method, c.path, st)
		if st/100 == 2 {
			t.Errorf("admin API %s %s from a foreign origin with the admin's session answered %d", c.method, c.path, st)
		}
	}
	cl, err := x.store.GetClient(ctx, demo.ClientID)
	if err != nil || cl.Disabled || cl.Name == "Hijacked" {
		t.Errorf("the demo client was changed: %+v %v", cl, err)
	}
	for _, id := range []string{"csrf-client", "csrf-api-client"} {
		if _, err := x.store.GetClient(ctx, id); err == nil {
			t.Errorf("client %s was created cross-site", id)
		}
	}
	if _, err := x.store.GetAccountByEmail(ctx, "csrf-admin@example.com"); err == nil {
		t.Error("an administrator account was created cross-site")
	}
	if b, err := x.store.GetBusiness(ctx, "biz-brightcut-barbers"); err != nil || !b.AgentBooking {
		t.Errorf("agent booking was switched off cross-site: %v", err)
	}
	x.alive()
}
