// Package cli is the resourceserver command line, on spf13/cobra, in the
// authorization server's shape (authserver/internal/cli): serve (the
// default), migrate, and `resourceserver completion
// bash|zsh|fish|powershell`.
//
// internal/cmdline holds the rules every command follows: --help and
// completion never read the configuration or open the database (commands
// do that in their RunE, through env); a command-line mistake prints the
// usage line and exits 2; any other failure is one line and exit 1. Every
// command reads the configuration once (all problems reported together),
// and a database that cannot be opened, reached or migrated ends the
// command with one clear line before anything listens.
//
// Adding a command: a func newXCmd(e *app.CommandEnv) *cobra.Command, added
// to the AddCommand list in newRoot; its RunE calls e.Config() and
// e.OpenStore(ctx, …) for what it needs, prints to cmd.OutOrStdout(), and
// returns cmdline.Usagef for a bad command line. A row in TestCommandLine
// drives it through Run.
package cli

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const prog = "resourceserver"

// IO is the command's standard streams.
type IO = cmdline.IO

// Run runs one command line (without the program name) and returns the
// process exit status: 0, 1 for a failure, 2 for a usage mistake.
func Run(ctx context.Context, args []string, getenv config.Getenv, st IO) int {
	e := &app.CommandEnv{Getenv: getenv, Stderr: st.Stderr, LogWith: []any{"server", prog}}
	defer e.Close()
	return cmdline.Execute(ctx, newRoot(e), args, st)
}

func newRoot(e *app.CommandEnv) *cobra.Command {
	serve := newServeCmd(e)
	root := &cobra.Command{
		Use:   prog,
		Short: "Linkslot's MCP resource server",
		Long: `Linkslot's MCP resource server: the MCP endpoint and its protected-resource metadata.
Without a command it serves. Configuration comes from LINKSLOT_* environment
variables (see the README); --help never reads it.`,
		RunE: serve.RunE,
	}
	root.AddCommand(serve, app.MigrateCommand(e, "Apply pending database migrations and exit"))
	return root
}

func newServeCmd(e *app.CommandEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the MCP endpoint on LINKSLOT_RS_LISTEN (the default command)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := e.Config()
			if err != nil {
				return err
			}
			// The grant signing keys are encrypted with it.
			if err := cfg.EnsureSecretKey(); err != nil {
				return err
			}
			s, err := e.OpenStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, s, log)
		},
	}
}

// serve runs the resource server through the serve sequence both servers
// share (app.RunServer).
func serve(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger) error {
	return app.RunServer(ctx, s, log, app.Server{
		Name: prog, Listen: cfg.RSListen, MetricsListen: cfg.RSMetricsListen,
		Handler: func(ctx context.Context, m *metrics.Metrics) (http.Handler, error) {
			// On PostgreSQL the rate limits hold across every replica.
			rw, _ := app.SharedRateWindows(s)
			return rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: log, Metrics: m, RateWindows: rw})
		},
		Listening: "resource server listening", Attrs: []any{"resource", cfg.Resource, "issuer", cfg.Issuer},
	}, cfg.ShutdownTimeout)
}
