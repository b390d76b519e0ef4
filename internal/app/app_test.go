package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func get(t *testing.T, h http.Handler, path string) (int, map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", path, rec.Body.String(), err)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control = %q", path, rec.Header().Get("Cache-Control"))
	}
	return rec.Code, body
}

func TestHealth(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s, err := sqlstore.Open(ctx, sqltest.MustURL(t, backend), sqlstore.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := HealthHandler(s)

			if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
				t.Errorf("/healthz = %d, want 200", code)
			}
			// Not migrated yet: not ready.
			if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || body["status"] != "unavailable" {
				t.Errorf("/readyz before migrating = %d %v, want 503", code, body)
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if code, body := get(t, h, "/readyz"); code != http.StatusOK || body["status"] != "ready" {
				t.Errorf("/readyz when migrated = %d %v, want 200", code, body)
			}
			// The database goes away: not ready, but the process is up.
			s.Close()
			if code, _ := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
				t.Errorf("/readyz with the database closed = %d, want 503", code)
			}
			if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
				t.Errorf("/healthz with the database closed = %d, want 200", code)
			}
		})
	}
}

// TestReadyzSchemaBehind: a database migrated by an older binary (one
// migration missing) is not ready.
func TestReadyzSchemaBehind(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		if err := s.DB().Exec("DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)").Error; err != nil {
			t.Fatal(err)
		}
		if code, _ := get(t, HealthHandler(s), "/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("/readyz with a migration pending = %d, want 503", code)
		}
	})
}

func TestOpenStore(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			cfg := config.Config{DatabaseURL: sqltest.MustURL(t, backend)}
			want := "not current" // an empty PostgreSQL database
			if path, ok := sqlstore.SQLiteFile(cfg.DatabaseURL); ok {
				want = "no database at " + path // and nothing created there
				defer func() {
					if _, err := os.Stat(path); err != nil {
						t.Errorf("migrate did not create the SQLite file: %v", err)
					}
				}()
			}
			if _, err := OpenStore(ctx, cfg, quiet, false); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("OpenStore without migrating on an empty database = %v, want %q", err, want)
			}
			if path, ok := sqlstore.SQLiteFile(cfg.DatabaseURL); ok {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Fatalf("OpenStore without migrating created %s (%v)", path, err)
				}
			}
			s, err := OpenStore(ctx, cfg, quiet, true)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, err = OpenStore(ctx, cfg, quiet, false)
			if err != nil {
				t.Fatalf("OpenStore on a migrated database: %v", err)
			}
			s.Close()
		})
	}
}

func TestServeGracefulShutdown(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	finish := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-finish
		io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, l, h, 5*time.Second, quiet) }()
	resp := make(chan string, 1)
	go func() {
		r, err := http.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			resp <- err.Error()
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		resp <- string(b)
	}()
	<-started
	cancel() // shutdown begins while a request is in flight
	time.Sleep(50 * time.Millisecond)
	close(finish)
	if got := <-resp; got != "done" {
		t.Errorf("in-flight request = %q, want it drained", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if _, err := http.Get("http://" + l.Addr().String() + "/"); err == nil {
		t.Error("server still accepts after shutdown")
	}
}

func TestListenTaken(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Listen(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "cannot listen on "+l.Addr().String()) {
		t.Fatalf("Listen on a taken address = %v", err)
	}
}
