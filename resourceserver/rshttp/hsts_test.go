package rshttp_test

import (
	"net/http"
	"testing"
)

// TestHSTSProduction: in production every answer of the resource server —
// metadata, an MCP call, a refusal, a 404, a 405 — carries
// Strict-Transport-Security (docs/reference.md §13); in development none
// does.
func TestHSTSProduction(t *testing.T) {
	for _, production := range []bool{true, false} {
		e := newEnv(t, envOpts{production: production})
		want := ""
		if production {
			want = "max-age=63072000; includeSubDomains"
		}
		answers := map[string]*http.Response{
			"tools/list":  e.rpc(e.token(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil),
			"no token":    e.rpc("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil),
			"evil origin": e.rpc(e.token(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Origin": "https://evil.example"}),
		}
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/healthz", "/nothing-here", "/mcp"} {
			resp, err := http.Get(e.rs.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			answers["GET "+path] = resp
		}
		for name, resp := range answers {
			resp.Body.Close()
			if got := resp.Header.Get("Strict-Transport-Security"); got != want {
				t.Errorf("production=%v, %s (%d): Strict-Transport-Security %q, want %q", production, name, resp.StatusCode, got, want)
			}
		}
		for name, code := range map[string]int{"tools/list": 200, "no token": 401, "evil origin": 403, "GET /nothing-here": 404, "GET /mcp": 405} {
			if answers[name].StatusCode != code {
				t.Errorf("production=%v, %s: %d, want %d", production, name, answers[name].StatusCode, code)
			}
		}
	}
}
