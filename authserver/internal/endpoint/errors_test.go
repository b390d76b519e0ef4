package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/internal/store"
)

// TestClassify: what a client may see of each failure, and which ones are
// internal (logged, answered as server_error without their detail).
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		code     string
		status   int
		internal bool
		desc     string // substring of the description
	}{
		{"a lost race", fmt.Errorf("redeem: %w", store.ErrConflict), "invalid_grant", 400, false, "already used"},
		{"database down", fmt.Errorf("read: %w", store.ErrUnavailable), "temporarily_unavailable", 503, true, "retry shortly"},
		{"plain error", errors.New("disk on fire at /var/lib"), "server_error", 500, true, "could not complete"},
		{"fosite invalid_request", fosite.ErrInvalidRequest.WithHint("The redirect_uri is missing."), "invalid_request", 400, false, "redirect_uri is missing"},
		{"fosite invalid_grant, wrapped", fmt.Errorf("token: %w", fosite.ErrInvalidGrant), "invalid_grant", 400, false, ""},
		{"fosite invalid_client", fosite.ErrInvalidClient, "invalid_client", 401, false, ""},
		{"fosite invalid_scope", fosite.ErrInvalidScope, "invalid_scope", 400, false, ""},
		{"fosite server_error", fosite.ErrServerError.WithWrap(errors.New("secret detail")), "server_error", 500, true, "could not complete"},
		{"fosite error without a status", &fosite.RFC6749Error{ErrorField: "odd"}, "server_error", 500, true, "could not complete"},
		{"fosite 5xx", &fosite.RFC6749Error{ErrorField: "temporarily_unavailable", CodeField: 503}, "server_error", 500, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, internal := classify(tt.err)
			if e.Code != tt.code || e.Status != tt.status || internal != tt.internal || !strings.Contains(e.Description, tt.desc) {
				t.Fatalf("classify = %+v internal=%v, want %s %d internal=%v %q", e, internal, tt.code, tt.status, tt.internal, tt.desc)
			}
			if strings.Contains(e.Description, "secret detail") || strings.Contains(e.Description, "/var/lib") {
				t.Fatalf("an internal detail reached the client: %q", e.Description)
			}
		})
	}
}

// TestWriteJSONError: the one JSON error writer's headers and body.
func TestWriteJSONError(t *testing.T) {
	for _, tt := range []struct {
		name  string
		e     oauthError
		basic bool // WWW-Authenticate: Basic
	}{
		{"invalid_client 401 asks for Basic", errPublicIntrospt, true},
		{"invalid_client 400 does not", oauthError{"invalid_client", "x", http.StatusBadRequest}, false},
		{"server_error", errServer, false},
		{"invalid_target", errInvalidTarget, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeJSONError(rec, tt.e)
			var body map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			h := rec.Header()
			if rec.Code != tt.e.Status || body["error"] != tt.e.Code || body["error_description"] != tt.e.Description ||
				h.Get("Cache-Control") != "no-store" || h.Get("Pragma") != "no-cache" || h.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %v %v", rec.Code, h, body)
			}
			if got := h.Get("WWW-Authenticate") == `Basic realm="linkslot"`; got != tt.basic {
				t.Fatalf("WWW-Authenticate %q", h.Get("WWW-Authenticate"))
			}
		})
	}
}

// TestRedirectError: an authorize error goes back to the (validated)
// redirect URI with error, description, state and iss (RFC 9207), never
// in a fragment.
func TestRedirectError(t *testing.T) {
	h := New(Deps{Issuer: "https://auth.linkslot.test"})
	for _, tt := range []struct {
		name, method, redirect, state string
		e                             oauthError
		status                        int
		want                          url.Values
	}{
		{"GET", http.MethodGet, "https://app.example/cb", "s1", errAccessDenied, http.StatusFound,
			url.Values{"error": {"access_denied"}, "error_description": {errAccessDenied.Description}, "state": {"s1"}, "iss": {"https://auth.linkslot.test"}}},
		{"POST, no state", http.MethodPost, "https://app.example/cb?keep=1#frag", "", errInvalidTarget, http.StatusSeeOther,
			url.Values{"keep": {"1"}, "error": {"invalid_target"}, "error_description": {errInvalidTarget.Description}, "iss": {"https://auth.linkslot.test"}}},
		{"no description", http.MethodGet, "http://127.0.0.1:5555/callback", "s2", oauthError{Code: "login_required", Status: 400}, http.StatusFound,
			url.Values{"error": {"login_required"}, "state": {"s2"}, "iss": {"https://auth.linkslot.test"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			back, _ := url.Parse(tt.redirect)
			rec := httptest.NewRecorder()
			h.redirectError(rec, httptest.NewRequest(tt.method, "/oauth2/authorize", nil), back, tt.state, tt.e)
			loc, err := url.Parse(rec.Header().Get("Location"))
			if err != nil || rec.Code != tt.status || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v %v", rec.Code, rec.Header(), err)
			}
			if loc.Fragment != "" || loc.Scheme+"://"+loc.Host+loc.Path != strings.SplitN(strings.SplitN(tt.redirect, "?", 2)[0], "#", 2)[0] {
				t.Fatalf("Location %s", loc)
			}
			if got := loc.Query(); got.Encode() != tt.want.Encode() {
				t.Fatalf("query %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFailLogs: fail logs internal failures without their debug details
// and only the code of a refusal.
func TestFailLogs(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		status  int
		logged  string // substring of the log
		notLogd string
	}{
		{"internal", fosite.ErrServerError.WithWrap(errors.New("pq: connection refused")).WithDebug("debug-only"), 500,
			"request failed", "debug-only"},
		{"refusal", fosite.ErrInvalidRequest.WithDebug("debug-only"), 400, "request refused", "debug-only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := New(Deps{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			rec := httptest.NewRecorder()
			h.fail(rec, httptest.NewRequest(http.MethodPost, "/oauth2/token", nil), tt.err)
			if rec.Code != tt.status || !strings.Contains(logs.String(), tt.logged) || strings.Contains(logs.String(), tt.notLogd) ||
				strings.Contains(rec.Body.String(), tt.notLogd) {
				t.Fatalf("%d %s\nlog: %s", rec.Code, rec.Body, logs.String())
			}
		})
	}
}

// TestResource: the resource parameter (RFC 8707) names one configured
// resource or none (the default).
func TestResource(t *testing.T) {
	h := New(Deps{Resources: []string{"https://rs.example/mcp", "https://rs2.example/mcp"}})
	for _, tt := range []struct {
		name   string
		values []string
		want   string
		ok     bool
	}{
		{"none: the default", nil, "https://rs.example/mcp", true},
		{"the second", []string{"https://rs2.example/mcp"}, "https://rs2.example/mcp", true},
		{"unknown", []string{"https://evil.example/mcp"}, "", false},
		{"a prefix of a configured one", []string{"https://rs.example/"}, "", false},
		{"two", []string{"https://rs.example/mcp", "https://rs2.example/mcp"}, "", false},
	} {
		if got, ok := h.resource(tt.values); got != tt.want || ok != tt.ok {
			t.Errorf("%s: resource(%v) = %q, %v", tt.name, tt.values, got, ok)
		}
	}
}
