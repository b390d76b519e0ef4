package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/authserver/authhttp"
	consentui "github.com/linkslot/linkslot/consent-ui"
	adminui "github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

func fmtSecret(err error) error { return fmt.Errorf("secret key: %w", err) }

func newServeCmd(e *env) *cobra.Command {
	var readyFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the authorization server on LINKSLOT_AUTH_LISTEN (the default command)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.openStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			cfg, log, _ := e.config()
			return serve(cmd.Context(), cfg, s, log, readyFile)
		},
	}
	cmd.Flags().StringVar(&readyFile, "ready-file", "", "once listening, write the address to this file (for scripts that wait for the server)")
	return cmd
}

func newDemoCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Load the demo accounts, client and businesses (idempotent)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.openStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			cfg, _, _ := e.config()
			res, err := demo.Load(cmd.Context(), s, demo.Data{Password: cfg.DemoPassword, Hash: password.Hash,
				Catalogs: booking.DemoCatalogs(store.SystemClock())})
			if err != nil {
				return err
			}
			if _, err = fmt.Fprintf(cmd.OutOrStdout(), "demo data ready: %d accounts, %d businesses created (existing ones kept)\n", res.AccountsCreated, res.Businesses); err != nil || !res.ClientUpdated {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "demo client %s: added the MCP Inspector's /oauth/callback redirects\n", demo.ClientID)
			return err
		},
	}
}

func newKeysCmd(e *env) *cobra.Command {
	var purpose string
	rotate := &cobra.Command{
		Use:   "rotate [--purpose token|grant]",
		Short: "Add a new signing key; the previous one stays published",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if purpose != store.KeyPurposeToken && purpose != store.KeyPurposeGrant {
				return cmdline.Usagef("--purpose must be token or grant")
			}
			svc, err := e.adminService(cmd.Context())
			if err != nil {
				return err
			}
			rotated, err := svc.RotateSigningKey(cmd.Context(), admin.Actor{ID: admin.ActorCLI}, purpose)
			if err != nil {
				return err
			}
			for _, k := range rotated {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "new %s signing key %s is current; the previous key stays published until its tokens expire\n", k.Purpose, k.KID); err != nil {
					return err
				}
			}
			return nil
		},
	}
	rotate.Flags().StringVar(&purpose, "purpose", store.KeyPurposeToken, "token (access and ID tokens, ES256 and RS256 together) or grant (booking grants)")
	_ = rotate.RegisterFlagCompletionFunc("purpose", cmdline.Values(store.KeyPurposeToken, store.KeyPurposeGrant))
	keysCmd := &cobra.Command{Use: "keys", Short: "Manage signing keys"}
	keysCmd.AddCommand(rotate)
	return keysCmd
}

func serve(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger, readyFile string) error {
	return app.RunServer(ctx, s, log, app.Server{
		Name: "authserver", Listen: cfg.AuthListen, MetricsListen: cfg.AuthMetricsListen, ReadyFile: readyFile,
		ListenVar: "LINKSLOT_AUTH_LISTEN", MetricsListenVar: "LINKSLOT_AUTH_METRICS_LISTEN",
		Register: func(m *metrics.Metrics) {
			m.RegisterSigningKeys(s, store.KeyPurposeToken, store.KeyPurposeTokenRS256, store.KeyPurposeGrant)
		},
		Handler: func(ctx context.Context, m *metrics.Metrics) (http.Handler, error) {
			return Handler(ctx, cfg, s, log, m)
		},
		Listening: "authorization server listening",
		Attrs:     []any{"issuer", cfg.Issuer, "resource", cfg.Resource, "database", sqlstore.Where(cfg.DatabaseURL)},
	}, cfg.ShutdownTimeout)
}

// Handler is the production handler: authhttp as it wires the server
// (authhttp.Wire: every service built once, the outbox worker running
// until ctx ends) with the admin pages and the admin API.
func Handler(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger, m *metrics.Metrics) (http.Handler, error) {
	// On PostgreSQL the sign-in throttle counts in the database, shared
	// by every replica; on SQLite in this process.
	rw, _ := app.SharedRateWindows(s)
	admin := func(ui *consentui.UI, services *app.AuthServices) (func(*http.ServeMux), error) {
		svc, err := services.AdminService(cfg, s, cimd.NewResolver(nil, cimd.Options{Development: !cfg.Production, Observe: m.ObserveFetch}))
		if err != nil {
			return nil, err
		}
		pages, err := adminui.New(svc, ui, log)
		if err != nil {
			return nil, err
		}
		api := adminapi.NewAPI(svc, adminapi.AnyOf{adminapi.NewTokenAuth(cfg.AdminToken), adminapi.NewSessionAuth(ui)}, log)
		return func(mux *http.ServeMux) {
			mux.Handle(adminapi.Prefix, api)
			mux.Handle("/admin", pages)
			mux.Handle("/admin/", pages)
		}, nil
	}
	h, _, err := authhttp.Wire(ctx, authhttp.Deps{Store: s, Config: cfg, PoolSize: s.PoolSize(), DCRStore: s, Leases: s, Logger: log, Metrics: m},
		authhttp.Wiring{Services: app.ServiceOptions{RateWindows: rw}, Mount: admin})
	return h, err
}
