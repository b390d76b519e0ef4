package authhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestHSTSProduction: in production every answer of the authorization
// server — metadata, JWKS, an authorize refusal, a token refusal, a 404, a body past the
// limit (413) — carries Strict-Transport-Security (docs/reference.md §13);
// in development none does.
func TestHSTSProduction(t *testing.T) {
	for _, production := range []bool{true, false} {
		e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Config.Production = production })
		want := ""
		if production {
			want = "max-age=63072000; includeSubDomains"
		}
		answers := map[string]*http.Response{}
		for _, path := range []string{"/.well-known/openid-configuration", "/.well-known/jwks.json", "/oauth2/authorize", "/nothing-here"} {
			resp, err := http.Get(e.issuer + path)
			if err != nil {
				t.Fatal(err)
			}
			answers["GET "+path] = resp
		}
		answers["token refusal"] = corsRequest(t, http.MethodPost, e.issuer+"/oauth2/token", "")
		big, err := http.Post(e.issuer+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader(strings.Repeat("a", 2<<20)))
		if err != nil {
			t.Fatal(err)
		}
		answers["too large"] = big
		for name, resp := range answers {
			resp.Body.Close()
			if got := resp.Header.Get("Strict-Transport-Security"); got != want {
				t.Errorf("production=%v, %s (%d): Strict-Transport-Security %q, want %q", production, name, resp.StatusCode, got, want)
			}
		}
		for name, code := range map[string]int{"GET /.well-known/openid-configuration": 200, "GET /nothing-here": 404,
			"token refusal": 400, "too large": 413} {
			if answers[name].StatusCode != code {
				t.Errorf("production=%v, %s: %d, want %d", production, name, answers[name].StatusCode, code)
			}
		}
	}
}
