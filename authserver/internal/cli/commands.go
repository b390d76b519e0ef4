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
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/mutation"
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

func newMigrateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := e.openStore(cmd.Context(), true)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "database schema is current (%s)\n", sqlstore.Where(e.cfg.DatabaseURL))
			return err
		},
	}
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
	// The address first: a taken one ends the start before anything runs.
	l, err := app.Listen(cfg.AuthListen)
	if err != nil {
		return fmt.Errorf("LINKSLOT_AUTH_LISTEN: %w", err)
	}
	defer l.Close()
	m := metrics.New("authserver")
	m.RegisterDB("main", s.SQL())
	m.RegisterSigningKeys(s, store.KeyPurposeToken, store.KeyPurposeTokenRS256, store.KeyPurposeGrant)
	if err := app.StartJanitor(ctx, "authserver", s, m, log); err != nil {
		return err
	}
	h, err := Handler(ctx, cfg, s, log, m)
	if err != nil {
		return err
	}
	if err := app.ServeMetrics(ctx, cfg.AuthMetricsListen, m.Handler(), log); err != nil {
		return fmt.Errorf("LINKSLOT_AUTH_METRICS_LISTEN: %w", err)
	}
	log.Info("authorization server listening", "addr", l.Addr().String(), "issuer", cfg.Issuer, "resource", cfg.Resource, "database", sqlstore.Where(cfg.DatabaseURL))
	unready, err := app.WriteReadyFile(readyFile, l)
	if err != nil {
		return err
	}
	defer unready()
	return app.Serve(ctx, l, h, cfg.ShutdownTimeout, log)
}

// Handler is the production handler: authhttp with the consent UI pages,
// the admin pages and the admin API.
func Handler(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger, m *metrics.Metrics) (http.Handler, error) {
	// On PostgreSQL the sign-in throttle counts in the database, shared
	// by every replica; on SQLite in this process.
	rw, _ := app.SharedRateWindows(s)
	// One outbox for the account e-mails, the web cancellations' booking
	// messages and this process's delivery worker.
	notes, err := app.NewNotifications(cfg, s, app.NotificationOptions{Metrics: m.Registry(), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	id, err := identity.New(identity.Config{Store: s, RateWindows: rw, Issuer: cfg.Issuer, Mailer: app.AccountMailer(notes.Notifier)})
	if err != nil {
		return nil, err
	}
	// Deleting an account cancels its upcoming bookings through the same
	// mutation service the agents use, as the person on the web, and tells
	// the business as any other cancellation does.
	muts := &mutation.Service{Engine: booking.NewService(s, nil), Keeper: idempotency.New(s, mutation.InTx(s), nil, idempotency.MinTTL), Notifier: notes.Notifier}
	var devMail string
	if !cfg.Production && cfg.Mail.Kind == mail.KindDir {
		devMail = "/dev/mail" // authhttp mounts it in development
	}
	ui, err := consentui.New(consentui.Config{Store: s, Identity: id, SecretKey: cfg.SecretKey, Issuer: cfg.Issuer, Logger: log, Mutations: muts, DevMailURL: devMail})
	if err != nil {
		return nil, err
	}
	svc, err := app.AdminService(cfg, s, cimd.NewResolver(nil, cimd.Options{Development: !cfg.Production, Observe: m.ObserveFetch}))
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
	return authhttp.New(ctx, authhttp.Deps{Store: s, Config: cfg, UI: ui, Logger: log, Metrics: m, Mount: mount, Notifications: notes})
}
