// Package app holds what both Linkslot servers do the same way at start and
// stop: logging, opening the store, health endpoints, serving with graceful
// shutdown.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// Logger returns the process logger in the configured format; every line
// logged with a request's context carries its request id.
func Logger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if os.Getenv("LINKSLOT_DEBUG") != "" {
		opts.Level = slog.LevelDebug
	}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(clientaddr.NewLogHandler(requestid.NewLogHandler(h)))
}

// OpenStore connects to the configured database. With migrate set it applies
// pending migrations, creating an SQLite file that does not exist yet;
// otherwise it refuses a schema that is not current, and an SQLite file
// that does not exist: it says where it looked rather than create an empty
// database there (docs/reference.md §15). Every error names the database
// (sqlstore.Where, never a password).
func OpenStore(ctx context.Context, cfg config.Config, log *slog.Logger, migrate bool) (*sqlstore.Store, error) {
	where := sqlstore.Where(cfg.DatabaseURL)
	if !migrate {
		if err := sqliteExists(cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	s, err := sqlstore.Open(ctx, cfg.DatabaseURL, sqlstore.Options{MaxOpenConns: cfg.DBMaxConns, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if migrate {
		n, err := s.Migrate(ctx)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if n > 0 {
			log.Info("migrations applied", "count", n, "dialect", s.Dialect(), "database", where)
		}
		return s, nil
	}
	ok, err := s.MigrationsCurrent(ctx)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("read migration state of %s: %w", where, err)
	}
	if !ok {
		s.Close()
		return nil, fmt.Errorf("database schema is not current in %s: run `authserver migrate` first, with the same LINKSLOT_DATABASE_URL", where)
	}
	return s, nil
}

// sqliteExists fails, saying where it looked, when rawURL names an SQLite
// file that is not there; nil for PostgreSQL.
func sqliteExists(rawURL string) error {
	path, ok := sqlstore.SQLiteFile(rawURL)
	if !ok {
		return nil
	}
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("database file %s: %w", path, err)
	}
	if rel := strings.TrimPrefix(rawURL, "sqlite://"); !filepath.IsAbs(rel) {
		wd, _ := os.Getwd()
		return fmt.Errorf("no database at %s (LINKSLOT_DATABASE_URL=%s is relative to the working folder %s); run `authserver migrate` there, or set LINKSLOT_DATABASE_URL", path, rawURL, wd)
	}
	return fmt.Errorf("no database at %s; run `authserver migrate` to create it, or set LINKSLOT_DATABASE_URL to the database you meant", path)
}

// WarnUnknownVariables logs each LINKSLOT_ variable of environ (os.Environ)
// that Linkslot does not read, with the nearest known name
// (config.Unknown). Both servers and every command call it at start.
func WarnUnknownVariables(log *slog.Logger, environ []string) {
	for _, msg := range config.Unknown(environ) {
		log.Warn(msg)
	}
}

// Pinger reports readiness.
type Pinger interface{ Ping(context.Context) error }

// Health mounts /healthz (the process answers) and /readyz (the database
// answers and the schema is current) on mux.
func Health(mux *http.ServeMux, db Pinger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "database not ready"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

// HealthHandler is Health as a handler of its own.
func HealthHandler(db Pinger) http.Handler {
	mux := http.NewServeMux()
	Health(mux, db)
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Listen opens a TCP listener, with a clear error for a taken address.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot listen on %s: the address is already in use (another server, or an earlier one still running?)", addr)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return l, nil
}

// WriteReadyFile writes the address l listens on to path, when path is
// set (serve --ready-file): a script that started the server waits for the
// file, so that what answers on the address is known to be this process
// and not another one already there (scripts/run). The file is written
// whole (a temporary file renamed), and the returned func removes it.
func WriteReadyFile(path string, l net.Listener) (remove func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(l.Addr().String()+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("ready file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("ready file: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// Serve serves h on l until ctx ends or SIGINT/SIGTERM arrives, then stops
// accepting and drains in-flight requests for up to drain.
func Serve(ctx context.Context, l net.Listener, h http.Handler, drain time.Duration, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "drain", drain)
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	return nil
}

// ServeMetrics serves h on addr (the server's own metrics address,
// LINKSLOT_AUTH_METRICS_LISTEN or LINKSLOT_RS_METRICS_LISTEN) in the background when one is
// configured, and stops with ctx. A listen failure is returned at once.
func ServeMetrics(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	l, err := Listen(addr)
	if err != nil {
		return err
	}
	log.Info("metrics listening", "addr", l.Addr().String())
	go func() {
		if err := Serve(ctx, l, h, time.Second, log); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return nil
}

// SharedRateWindows returns the store's shared rate windows when limits on
// it are shared by the replicas: on PostgreSQL they are (the rate limits
// and the sign-in throttle hold across every process, docs/reference.md §13);
// SQLite is a single-node deployment and keeps them in process.
func SharedRateWindows(s *sqlstore.Store) (store.RateWindows, bool) {
	if s.Dialect() != "postgres" {
		return nil, false
	}
	return s, true
}
