package authhttp_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// registeredRedirects are the harness clients' redirect URIs (harness_test.go).
var registeredRedirects = map[string][]string{
	publicID: {"http://127.0.0.1/callback", "http://localhost/callback"},
	confID:   {"https://app.example/cb"},
	otherID:  {"http://127.0.0.1/callback"},
}

// oauthErrors are the error codes a JSON or redirect error may carry:
// RFC 6749 §4.1.2.1 and §5.2, and RFC 8707's invalid_target.
var oauthErrors = map[string]bool{
	"invalid_request": true, "unauthorized_client": true, "access_denied": true, "unsupported_response_type": true,
	"invalid_scope": true, "server_error": true, "temporarily_unavailable": true, "invalid_client": true,
	"invalid_grant": true, "unsupported_grant_type": true, "invalid_target": true,
}

// isRegistered says whether u is one of client's registered redirect URIs
// (a loopback URI matches on any port, RFC 8252 §7.3).
func isRegistered(client string, u *url.URL) bool {
	for _, r := range registeredRedirects[client] {
		ru, _ := url.Parse(r)
		if u.Scheme != ru.Scheme || u.Hostname() != ru.Hostname() || u.Path != ru.Path || u.User != nil || u.Opaque != "" {
			continue
		}
		if ip := net.ParseIP(u.Hostname()); u.Port() == ru.Port() || (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return true
		}
	}
	return false
}

// FuzzAuthorizeToken sends arbitrary authorize and token parameters to the
// real handler (GET and POST /oauth2/authorize, signed in or not, the
// consent decision with a valid CSRF token, POST /oauth2/token). It is
// never a 5xx or a dropped connection; a redirect off the server goes only
// to a redirect URI registered for the named client (no open redirect), and
// an error it carries is an RFC 6749 code; a JSON error carries an RFC 6749
// code too.
func FuzzAuthorizeToken(f *testing.F) {
	type in struct {
		endpoint                                                       uint8
		signedIn                                                       bool
		clientID, redirectURI, responseType, scope, state, challenge   string
		method, resource, grantType, code, refresh, verifier, decision string
	}
	for _, s := range []in{
		{0, true, publicID, "http://127.0.0.1:53682/callback", "code", "bookings:read", "state-1234567890", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", resource, "", "", "", "", ""},
		{0, false, publicID, "http://127.0.0.1/callback", "code", "openid bookings:write", "s", "x", "plain", resource, "", "", "", "", ""},
		{0, true, publicID, "https://evil.example/callback", "code", "bookings:read", "s", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", resource, "", "", "", "", ""},
		{0, true, publicID, "http://127.0.0.1.evil.example/callback", "token", "", "", "", "", "", "", "", "", "", ""},
		{1, true, confID, "https://app.example/cb", "code", "openid", "state-1234567890", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", "https://other.example/mcp", "", "", "", "", ""},
		{3, true, publicID, "http://localhost:1234/callback", "code", "bookings:read bookings:write", "state-1234567890", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", resource, "", "", "", "", "allow"},
		{3, true, otherID, "http://127.0.0.1/callback", "code", "bookings:write", "state-1234567890", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256", resource, "", "", "", "", "deny"},
		{2, false, publicID, "http://127.0.0.1/callback", "", "", "", "", "", resource, "authorization_code", "abc.def", "", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", ""},
		{2, false, publicID, "", "", "bookings:read", "", "", "", resource, "refresh_token", "", "ory_rt_x.y", "", ""},
		{2, false, confID, "", "", "", "", "", "", "", "client_credentials", "", "", "", ""},
		{2, false, "", "", "", "", "", "", "", "", "password", "", "", "", ""},
	} {
		f.Add(s.endpoint, s.signedIn, s.clientID, s.redirectURI, s.responseType, s.scope, s.state, s.challenge,
			s.method, s.resource, s.grantType, s.code, s.refresh, s.verifier, s.decision)
	}
	e := newEnv(f, sqltest.SQLite(f))
	noRedirect := e.browser()
	f.Fuzz(func(t *testing.T, endpoint uint8, signedIn bool, clientID, redirectURI, responseType, scope, state, challenge,
		method, resource, grantType, code, refresh, verifier, decision string) {
		form := url.Values{}
		set := func(k, v string) {
			if v != "" {
				form.Set(k, v)
			}
		}
		set("client_id", clientID)
		set("redirect_uri", redirectURI)
		set("resource", resource)
		set("scope", scope)
		var req *http.Request
		switch endpoint % 4 {
		case 0, 1, 3: // authorize: GET query, POST form, consent decision
			set("response_type", responseType)
			set("state", state)
			set("code_challenge", challenge)
			set("code_challenge_method", method)
			if endpoint%4 == 0 {
				req, _ = http.NewRequest(http.MethodGet, e.issuer+"/oauth2/authorize?"+form.Encode(), nil)
				break
			}
			if endpoint%4 == 3 {
				form.Set("decision", decision)
				form.Set(consent.CSRFField, testCSRF)
			}
			req, _ = http.NewRequest(http.MethodPost, e.issuer+"/oauth2/authorize", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		case 2:
			set("grant_type", grantType)
			set("code", code)
			set("refresh_token", refresh)
			set("code_verifier", verifier)
			req, _ = http.NewRequest(http.MethodPost, e.issuer+"/oauth2/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if signedIn {
			req.AddCookie(&http.Cookie{Name: testCookie, Value: e.account.ID})
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v (handler panic or dropped connection)", req.Method, req.URL, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		what := req.Method + " " + req.URL.Path + " " + form.Encode()
		t.Logf("%s: %d %s %s", what, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("X-Test-Page"))
		if resp.StatusCode >= 500 {
			t.Fatalf("%s: status %d: %s", what, resp.StatusCode, body)
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			loc := resp.Header.Get("Location")
			u, err := url.Parse(loc)
			if err != nil {
				t.Fatalf("%s: unparsable Location %q", what, loc)
			}
			if u.Scheme == "" && u.Host == "" { // on this server: only the sign-in page
				if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || strings.Contains(u.Path, `\`) {
					t.Fatalf("%s: relative redirect %q leaves the server", what, loc)
				}
				if next := u.Query().Get("next"); next != "" && (!strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`)) {
					t.Fatalf("%s: sign-in redirect %q with an off-site next", what, loc)
				}
				return
			}
			if iss, _ := url.Parse(e.issuer); u.Scheme == iss.Scheme && u.Host == iss.Host {
				return
			}
			if !isRegistered(clientID, u) {
				t.Fatalf("%s: OPEN REDIRECT to %q (not registered for %q)", what, loc, clientID)
			}
			q := u.Query()
			if u.Fragment != "" {
				q, _ = url.ParseQuery(u.Fragment)
			}
			if ec := q.Get("error"); ec != "" && !oauthErrors[ec] {
				t.Fatalf("%s: redirect error %q is not an RFC 6749 code (%s)", what, ec, loc)
			}
			if q.Get("error") == "" && q.Get("code") == "" {
				t.Fatalf("%s: redirect to the client with neither code nor error: %s", what, loc)
			}
			return
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && resp.StatusCode >= 400 {
			var m struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil || !oauthErrors[m.Error] || m.Error == "server_error" {
				t.Fatalf("%s: JSON error %d %s is not an RFC 6749 error", what, resp.StatusCode, body)
			}
		}
	})
}
