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
	e := &app.CommandEnv{Getenv: getenv, Stderr: st.Stderr, Environ: st.Environ, LogWith: []any{"server", prog}}
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
variables (docs/reference.md §1); --help never reads it.`,
		RunE: serve.RunE,
	}
	root.AddCommand(serve, app.MigrateCommand(e, "Apply pending database migrations and exit"))
	return root
}

func newServeCmd(e *app.CommandEnv) *cobra.Command {
	var readyFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the MCP endpoint on LINKSLOT_RS_LISTEN (the default command)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The store before the secret key (the grant signing keys
			// are encrypted with it), so that a start where there is no
			// database creates nothing there (app.OpenStore).
			s, err := e.OpenStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			cfg, err := e.EnsureSecretKey()
			if err != nil {
				return err
			}
			_, log, _ := e.Config()
			return serve(cmd.Context(), cfg, s, log, readyFile)
		},
	}
	cmd.Flags().StringVar(&readyFile, "ready-file", "", "once listening, write the address to this file (for scripts that wait for the server)")
	return cmd
}

// serve runs the resource server through the serve sequence both servers
// share (app.RunServer).
func serve(ctx context.Context, cfg config.Config, s *sqlstore.Store, log *slog.Logger, readyFile string) error {
	return app.RunServer(ctx, s, log, app.Server{
		Name: prog, Listen: cfg.RSListen, MetricsListen: cfg.RSMetricsListen, ReadyFile: readyFile,
		ListenVar: "LINKSLOT_RS_LISTEN", MetricsListenVar: "LINKSLOT_RS_METRICS_LISTEN",
		Handler: func(ctx context.Context, m *metrics.Metrics) (http.Handler, error) {
			// On PostgreSQL the rate limits hold across every replica.
			rw, _ := app.SharedRateWindows(s)
			return rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: log, Metrics: m, RateWindows: rw})
		},
		Listening: "resource server listening",
		Attrs:     []any{"resource", cfg.Resource, "issuer", cfg.Issuer, "database", sqlstore.Where(cfg.DatabaseURL)},
	}, cfg.ShutdownTimeout)
}
