package authhttp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func corsRequest(t *testing.T, method, u, origin string, hdr ...string) *http.Response {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {publicID}}.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, u, body)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// docs/reference.md §10: metadata and JWKS readable from any origin; token,
// revocation and userinfo echo an allowed origin with Vary: Origin;
// preflights answer 204 without authentication.
func TestCORS(t *testing.T) {
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) {
		d.Config.AllowedOrigins = []string{"https://inspector.example"}
	})
	const allowed, loopback, evil = "https://inspector.example", "http://localhost:6274", "https://evil.example"
	pre := []string{"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version"}

	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/jwks.json"} {
		r := corsRequest(t, http.MethodOptions, e.issuer+p, evil, pre...)
		if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "mcp-protocol-version") {
			t.Errorf("preflight %s: %d %v", p, r.StatusCode, r.Header)
		}
		r = corsRequest(t, http.MethodGet, e.issuer+p, evil)
		if r.StatusCode != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: %d ACAO %q", p, r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	for _, p := range []string{"/oauth2/token", "/oauth2/revoke", "/userinfo"} {
		for _, o := range []string{allowed, loopback} {
			r := corsRequest(t, http.MethodOptions, e.issuer+p, o, pre...)
			if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != o ||
				!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(r.Header.Get("Vary"), "Origin") {
				t.Errorf("preflight %s from %s: %d %v", p, o, r.StatusCode, r.Header)
			}
		}
		if r := corsRequest(t, http.MethodOptions, e.issuer+p, evil, pre...); r.StatusCode != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %s from %s: %d %v", p, evil, r.StatusCode, r.Header)
		}
	}
	// The answers themselves (errors included) carry the echo and expose
	// WWW-Authenticate.
	r := corsRequest(t, http.MethodPost, e.issuer+"/oauth2/token", allowed)
	if r.StatusCode == http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != allowed || !strings.Contains(r.Header.Get("Vary"), "Origin") {
		t.Errorf("token from an allowed origin: %d %v", r.StatusCode, r.Header)
	}
	r = corsRequest(t, http.MethodGet, e.issuer+"/userinfo", loopback)
	if r.StatusCode != http.StatusUnauthorized || r.Header.Get("Access-Control-Allow-Origin") != loopback ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("userinfo from loopback: %d %v", r.StatusCode, r.Header)
	}
	if r := corsRequest(t, http.MethodPost, e.issuer+"/oauth2/token", evil); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("token from %s got ACAO %q", evil, r.Header.Get("Access-Control-Allow-Origin"))
	}
}

// Outside development only the configured origins are echoed.
func TestCORSProductionNoLoopback(t *testing.T) {
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Config.Production = true })
	if r := corsRequest(t, http.MethodOptions, e.issuer+"/oauth2/token", "http://localhost:6274", "Access-Control-Request-Method", "POST"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("production preflight from loopback: %d", r.StatusCode)
	}
}
