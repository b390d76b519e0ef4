package rshttp_test

import (
	"net/http"
	"testing"
)

// TestOriginLoopbackRule: the MCP endpoint's loopback rule follows the
// resource URL, not LINKSLOT_ENV (docs/reference.md §4): a resource on
// loopback accepts an http or https Origin on any loopback host and port in
// production too, and still wants a loopback Host; TestBehindReverseProxy
// shows a public resource refusing them.
func TestOriginLoopbackRule(t *testing.T) {
	e := newEnv(t, envOpts{production: true})
	tok := e.token(nil)
	for origin, want := range map[string]int{
		"http://localhost:6274":   200,
		"https://127.0.0.1:8443":  200,
		"http://[::1]:3000":       200,
		"ftp://localhost:21":      403,
		"https://localhost.evil":  403,
		"https://app.example.com": 200, // configured
	} {
		resp := e.rpc(tok, toolsList, map[string]string{"Origin": origin})
		if body := readBody(t, resp); resp.StatusCode != want {
			t.Errorf("production, loopback resource, Origin %q: %d %s, want %d", origin, resp.StatusCode, body, want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, e.resource, http.NoBody)
	req.Host = "rebound.example"
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("loopback resource, Host rebound.example: %d %s, want 403", resp.StatusCode, body)
	}
}
