package authhttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLimitBodies: bodies past the route's limit answer 413 in the route's
// format whether or not they declare their length; bodies within it reach
// the handler intact.
func TestLimitBodies(t *testing.T) {
	var got int
	h := limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusRequestEntityTooLarge)
			return
		}
		got = len(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	over := strings.Repeat("a", MaxBodyBytes+1)
	for _, c := range []struct {
		name, path, body string
		chunked          bool
		status           int
		kind             string // json-oauth, json-admin, html
	}{
		{"token, over", "/oauth2/token", over, false, 413, "json-oauth"},
		{"token, over, chunked", "/oauth2/token", over, true, 413, "json-oauth"},
		{"userinfo, over", "/userinfo", over, false, 413, "json-oauth"},
		{"login, over", "/login", over, false, 413, "html"},
		{"login, over, chunked", "/login", over, true, 413, "html"},
		{"admin api, over", "/admin/api/clients", over, false, 413, "json-admin"},
		{"token, at the limit", "/oauth2/token", over[1:], true, 204, ""},
		{"import, 2 MiB", "/admin/api/catalog", strings.Repeat("a", 2<<20), false, 204, ""},
		{"import page, over its limit", "/admin/catalog", strings.Repeat("a", MaxImportBytes+1), false, 413, "html"},
		{"import, over its limit, chunked", "/admin/api/catalog", strings.Repeat("a", MaxImportBytes+1), true, 413, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got = -1
			req := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body))
			if c.chunked {
				req.ContentLength = -1
				req.Body = io.NopCloser(req.Body)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d", rec.Code, c.status)
			}
			if c.status == 204 && got != len(c.body) {
				t.Errorf("handler read %d bytes, want %d", got, len(c.body))
			}
			switch c.kind {
			case "json-oauth":
				var e struct{ Error string }
				if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error != "invalid_request" {
					t.Errorf("body %q, want an invalid_request error object", rec.Body.String())
				}
			case "json-admin":
				var e struct{ Error struct{ Code string } }
				if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != "too_large" {
					t.Errorf("body %q, want the admin API's too_large", rec.Body.String())
				}
			case "html":
				if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(rec.Body.String(), "Request too large") {
					t.Errorf("answer %q is not the fixed page", rec.Body.String())
				}
			}
		})
	}
}
