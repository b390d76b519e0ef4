package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/resourceserver/internal/router"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

const resource = "http://127.0.0.1:8081/mcp"

// tokens is an Authenticator that knows a few bearer tokens by name.
type tokens map[string]error

func (t tokens) Verify(_ context.Context, raw string) (tokencheck.Identity, error) {
	err, ok := t[raw]
	switch {
	case !ok:
		return tokencheck.Identity{}, fmt.Errorf("%w: unknown", tokencheck.ErrInvalidToken)
	case err != nil:
		return tokencheck.Identity{}, err
	}
	scopes := []string{"openid", "bookings:read"}
	if raw == "writer" {
		scopes = append(scopes, "bookings:write")
	}
	return tokencheck.Identity{AccountID: "acct-1", LinkID: "link-1", Scopes: scopes}, nil
}

// full refuses every address, for 3 seconds.
type full struct{}

func (full) Allow(context.Context, string) (bool, time.Duration) { return false, 3 * time.Second }

func newRouter(t *testing.T, mod func(*router.Options)) (http.Handler, *string) {
	t.Helper()
	var reached string
	o := router.Options{
		Resource: resource, Issuer: "http://127.0.0.1:8080", AllowedOrigins: []string{"https://app.example"},
		Auth: tokens{"reader": nil, "writer": nil, "down": tokencheck.ErrUnavailable},
		MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, _ := tokencheck.IdentityFrom(r.Context())
			reached = id.LinkID
			w.WriteHeader(http.StatusOK)
		}),
		RequiredScope: func(tool string) (string, bool) {
			if tool == "cancel_my_booking" {
				return "bookings:write", true
			}
			return "bookings:read", tool != ""
		},
	}
	if mod != nil {
		mod(&o)
	}
	e, err := router.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e, &reached
}

const callCancel = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_my_booking","arguments":{}}}`
const callList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// TestRouting decides, per request, what answers: the MCP handler (with
// the verified identity) or one of the router's own refusals, with its
// status, challenge and error code.
func TestRouting(t *testing.T) {
	md := "http://127.0.0.1:8081/.well-known/oauth-protected-resource/mcp"
	for _, tt := range []struct {
		name    string
		method  string
		path    string
		headers map[string][]string
		body    string
		mod     func(*router.Options)
		status  int
		reached bool   // the MCP handler ran, for link-1
		code    string // the body's "error"
		www     []string
	}{
		{name: "no token", method: "POST", path: "/mcp", body: callList, status: 401, code: "unauthorized",
			www: []string{`Bearer resource_metadata="` + md + `"`, `scope="openid"`}},
		{name: "two Authorization headers", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer reader", "Bearer writer"}}, status: 400, code: "invalid_request",
			www: []string{`error="invalid_request"`}},
		{name: "not a bearer header", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Basic abc"}}, status: 401, code: "invalid_token", www: []string{`error="invalid_token"`}},
		{name: "unknown token", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer nope"}}, status: 401, code: "invalid_token",
			www: []string{`error="invalid_token"`, `resource_metadata="` + md + `"`}},
		{name: "token check down", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer down"}}, status: 503, code: "temporarily_unavailable"},
		{name: "read token lists tools", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer reader"}}, status: 200, reached: true},
		{name: "read token calls a mutation", method: "POST", path: "/mcp", body: callCancel,
			headers: map[string][]string{"Authorization": {"Bearer reader"}}, status: 403, code: "insufficient_scope",
			www: []string{`error="insufficient_scope"`, `scope="openid bookings:write"`}},
		{name: "write token calls a mutation", method: "POST", path: "/mcp", body: callCancel,
			headers: map[string][]string{"Authorization": {"Bearer writer"}}, status: 200, reached: true},
		{name: "batch", method: "POST", path: "/mcp", body: "  [" + callList + "]",
			headers: map[string][]string{"Authorization": {"Bearer reader"}}, status: 400},
		{name: "foreign origin", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer reader"}, "Origin": {"https://evil.example"}}, status: 403, code: "forbidden"},
		{name: "configured origin", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer reader"}, "Origin": {"https://app.example"}}, status: 200, reached: true},
		{name: "loopback origin for a loopback resource", method: "POST", path: "/mcp", body: callList,
			headers: map[string][]string{"Authorization": {"Bearer reader"}, "Origin": {"http://localhost:6274"}}, status: 200, reached: true},
		{name: "body too large", method: "POST", path: "/mcp", body: strings.Repeat(" ", router.MaxBody+1),
			headers: map[string][]string{"Authorization": {"Bearer reader"}}, status: 413, code: "request_too_large"},
		{name: "rate limited address", method: "POST", path: "/mcp", body: callList, mod: func(o *router.Options) { o.Addresses = full{} },
			headers: map[string][]string{"Authorization": {"Bearer reader"}}, status: 429, code: "rate_limited"},
		{name: "GET is refused", method: "GET", path: "/mcp", status: 405, code: "method_not_allowed"},
		{name: "DELETE is refused", method: "DELETE", path: "/mcp", status: 405, code: "method_not_allowed"},
		{name: "metadata at the resource path", method: "GET", path: "/.well-known/oauth-protected-resource/mcp", status: 200},
		{name: "metadata at the root", method: "GET", path: "/.well-known/oauth-protected-resource", status: 200},
		{name: "unknown path", method: "GET", path: "/elsewhere", status: 404, code: "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, reached := newRouter(t, tt.mod)
			req := httptest.NewRequest(tt.method, "http://127.0.0.1:8081"+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, vs := range tt.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			if got := *reached == "link-1"; got != tt.reached {
				t.Fatalf("MCP handler reached: %v, want %v", got, tt.reached)
			}
			if tt.code != "" {
				var body struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != tt.code {
					t.Fatalf("error %q (%v), want %q: %s", body.Error, err, tt.code, rec.Body)
				}
			}
			for _, w := range tt.www {
				if got := rec.Header().Get("WWW-Authenticate"); !strings.Contains(got, w) {
					t.Errorf("WWW-Authenticate %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestMetadata: the RFC 9728 document names this resource and its issuer.
func TestMetadata(t *testing.T) {
	h, _ := newRouter(t, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:8081/.well-known/oauth-protected-resource/mcp", nil))
	var md router.Metadata
	if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil {
		t.Fatal(err)
	}
	if md.Resource != resource || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != "http://127.0.0.1:8080" ||
		strings.Join(md.ScopesSupported, " ") != "openid" || strings.Join(md.BearerMethodsSupported, " ") != "header" {
		t.Fatalf("metadata %+v", md)
	}
}

func TestMetadataURL(t *testing.T) {
	for _, tt := range []struct{ resource, want, err string }{
		{"http://127.0.0.1:8081/mcp", "http://127.0.0.1:8081/.well-known/oauth-protected-resource/mcp", ""},
		{"https://rs.example/mcp/", "https://rs.example/.well-known/oauth-protected-resource/mcp", ""},
		{"https://rs.example", "https://rs.example/.well-known/oauth-protected-resource", ""},
		{"/mcp", "", "not an absolute URL"},
	} {
		got, err := router.MetadataURL(tt.resource)
		if got != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q, %q", tt.resource, got, err, tt.want, tt.err)
		}
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*router.Options)
		want string
	}{
		{"no authenticator", func(o *router.Options) { o.Auth = nil }, "Auth are required"},
		{"no MCP handler", func(o *router.Options) { o.MCP = nil }, "Auth are required"},
		{"relative resource", func(o *router.Options) { o.Resource = "/mcp" }, "not an absolute URL"},
	} {
		o := router.Options{Resource: resource, MCP: http.NotFoundHandler(), Auth: tokens{},
			RequiredScope: func(string) (string, bool) { return "", false }}
		tt.mod(&o)
		if _, err := router.New(o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
