package requestid_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/requestid"
)

func TestMiddleware(t *testing.T) {
	tests := []struct {
		name     string
		incoming string
		keep     bool
	}{
		{"none", "", false},
		{"sane", "lb-7f3a.2026:11", true},
		{"uuid", "0b6c5a4e-8a43-4a52-9e3b-2f1f0f7a9c11", true},
		{"too long", strings.Repeat("a", 65), false},
		{"newline injection", "abc\nlevel=ERROR", false},
		{"space", "a b", false},
		{"quote", `a"b`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := requestid.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = requestid.From(r.Context())
			}))
			req := httptest.NewRequest("GET", "/", nil)
			if tt.incoming != "" {
				req.Header.Set(requestid.Header, tt.incoming)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if seen == "" || rec.Header().Get(requestid.Header) != seen {
				t.Fatalf("context id %q, header %q", seen, rec.Header().Get(requestid.Header))
			}
			if got := seen == tt.incoming; got != tt.keep {
				t.Fatalf("kept incoming = %v, want %v (id %q)", got, tt.keep, seen)
			}
			if !requestid.Valid(seen) {
				t.Fatalf("id %q is not valid", seen)
			}
		})
	}
}

func TestGeneratedIDsDiffer(t *testing.T) {
	a, b := requestid.New(), requestid.New()
	if a == b || len(a) != 32 {
		t.Fatalf("ids %q %q", a, b)
	}
}

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(requestid.NewLogHandler(slog.NewJSONHandler(&buf, nil))).With("service", "test").WithGroup("g")
	ctx := requestid.With(context.Background(), "req-1")
	log.InfoContext(ctx, "with id", "k", "v")
	log.InfoContext(context.Background(), "without id")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	// Inside a group the attribute lands in the group, as slog does for
	// every attribute added after WithGroup.
	g, _ := first["g"].(map[string]any)
	if g["request_id"] != "req-1" || first["service"] != "test" {
		t.Fatalf("first line %v", first)
	}
	if strings.Contains(lines[1], "request_id") {
		t.Fatalf("second line has a request id: %s", lines[1])
	}
}
