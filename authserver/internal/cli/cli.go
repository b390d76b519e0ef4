// Package cli is the authserver command line: serve (the default), migrate,
// keys rotate, and the administration commands (clients, users, catalog,
// audit), which internal/admin implements so the admin pages and the CLI
// share one audited code path.
//
// Every command reads the configuration once (all problems reported
// together), and a database that cannot be opened, reached or migrated ends
// the command with one clear line and a non-zero status before anything
// listens.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/linkslot/linkslot/authserver/authhttp"
	consentui "github.com/linkslot/linkslot/consent-ui"
	"github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// Usage is the command summary.
const Usage = `usage: authserver [command]

  serve                  run the authorization server (default)
  migrate                apply pending database migrations
  keys rotate [--purpose token|grant]
                         add a new signing key; the previous one stays published
  demo                   load the demo accounts, client and businesses (idempotent)
` + admin.CLIUsage + `

Configuration comes from LINKSLOT_* environment variables (see README).`

// IO is the command's standard streams.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run runs one command and returns the process exit status.
func Run(ctx context.Context, args []string, getenv config.Getenv, st IO) int {
	if err := run(ctx, args, getenv, st); err != nil {
		if errors.Is(err, admin.ErrUsage) || errors.Is(err, errUsage) {
			fmt.Fprintf(st.Stderr, "authserver: %v\n\n%s\n", err, Usage)
			return 2
		}
		fmt.Fprintf(st.Stderr, "authserver: %v\n", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, getenv config.Getenv, st IO) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "help", "-h", "--help":
		fmt.Fprintln(st.Stdout, Usage)
		return nil
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return err
	}
	if err := cfg.EnsureSecretKey(); err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	log := app.Logger(st.Stderr, cfg.LogFormat)
	switch cmd {
	case "serve":
		if len(args) > 1 {
			return fmt.Errorf("%w: serve takes no arguments", errUsage)
		}
		return serve(ctx, cfg, log)
	case "migrate":
		s, err := app.OpenStore(ctx, cfg, log, true)
		if err != nil {
			return err
		}
		defer s.Close()
		fmt.Fprintf(st.Stdout, "database schema is current (%s)\n", s.Dialect())
		return nil
	case "keys":
		return keysCmd(ctx, cfg, log, args[1:], st.Stdout)
	case "demo":
		return demoCmd(ctx, cfg, log, st.Stdout)
	case "clients", "users", "catalog", "audit":
		s, err := app.OpenStore(ctx, cfg, log, false)
		if err != nil {
			return err
		}
		defer s.Close()
		svc, err := admin.New(admin.Config{Store: s})
		if err != nil {
			return err
		}
		return admin.RunCLI(ctx, svc, args, st.Stdin, st.Stdout)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

func keysCmd(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return fmt.Errorf("%w: expected `keys rotate`", errUsage)
	}
	fs := flag.NewFlagSet("keys rotate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	purpose := fs.String("purpose", store.KeyPurposeToken, "token or grant")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: keys rotate: %v", errUsage, err)
	}
	if *purpose != store.KeyPurposeToken && *purpose != store.KeyPurposeGrant {
		return fmt.Errorf("%w: --purpose must be token or grant", errUsage)
	}
	s, err := app.OpenStore(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	kid, err := keys.NewManager(s, cfg.SecretKey, *purpose, nil).Rotate(ctx)
	if err != nil {
		return err
	}
	// Every administrative action is audited (CONTRACT §6): the purpose and
	// the new kid, never key material.
	after, _ := json.Marshal(map[string]string{"purpose": *purpose, "kid": kid})
	now := store.UTC(store.SystemClock())
	if err := s.AddAuditEvent(ctx, store.AuditEvent{ID: store.NewID("aud"), ActorID: "cli", Action: "keys.rotate",
		Target: *purpose + "/" + kid, After: after, CreatedAt: now}); err != nil {
		return fmt.Errorf("the new %s signing key %s is current, but its audit event was not written: %w", *purpose, kid, err)
	}
	fmt.Fprintf(out, "new %s signing key %s is current; the previous key stays published until its tokens expire\n", *purpose, kid)
	return nil
}

func demoCmd(ctx context.Context, cfg config.Config, log *slog.Logger, out io.Writer) error {
	s, err := app.OpenStore(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := demo.Load(ctx, s, demo.Data{Password: cfg.DemoPassword, Hash: password.Hash,
		Catalogs: booking.DemoCatalogs(store.SystemClock())})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "demo data ready: %d accounts, %d businesses created (existing ones kept)\n", res.AccountsCreated, res.Businesses)
	return nil
}

func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	s, err := app.OpenStore(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	m := metrics.New("authserver")
	m.RegisterDB("main", s.SQL())
	m.RegisterSigningKeys(s, store.KeyPurposeToken, store.KeyPurposeGrant)
	h, err := Handler(ctx, cfg, s, log, m)
	if err != nil {
		return err
	}
	if err := app.ServeMetrics(ctx, cfg.MetricsListen, m.Handler(), log); err != nil {
		return err
	}
	l, err := app.Listen(cfg.AuthListen)
	if err != nil {
		return err
	}
	log.Info("authorization server listening", "addr", l.Addr().String(), "issuer", cfg.Issuer, "resource", cfg.Resource)
	return app.Serve(ctx, l, h, cfg.ShutdownTimeout, log)
}

// Handler is the production handler: authhttp with the consent UI pages,
// the admin pages and the admin API.
func Handler(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger, m *metrics.Metrics) (http.Handler, error) {
	ui, err := consentui.New(consentui.Config{Store: s, SecretKey: cfg.SecretKey, Issuer: cfg.Issuer, Logger: log})
	if err != nil {
		return nil, err
	}
	svc, err := admin.New(admin.Config{Store: s})
	if err != nil {
		return nil, err
	}
	pages, err := adminui.New(svc, ui, log)
	if err != nil {
		return nil, err
	}
	api := adminapi.NewAPI(svc, adminapi.AnyOf{adminapi.NewTokenAuth(cfg.AdminToken), adminapi.NewSessionAuth(ui)}, log)
	mount := func(mux *http.ServeMux) {
		mux.Handle(adminapi.Prefix, api)
		mux.Handle("/admin", pages)
		mux.Handle("/admin/", pages)
	}
	return authhttp.New(ctx, authhttp.Deps{Store: s, Config: cfg, UI: ui, Logger: log, Metrics: m, Mount: mount})
}
