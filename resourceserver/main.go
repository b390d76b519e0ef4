// Command resourceserver serves Linkslot's MCP endpoint and its
// protected-resource metadata.
//
//	resourceserver [serve]   serve on LINKSLOT_RS_LISTEN (the default)
//	resourceserver migrate   apply pending database migrations and exit
//	resourceserver completion bash|zsh|fish|powershell
//
// The command line follows internal/cmdline: --help never reads the
// configuration, a mistake exits 2 with the usage line.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const prog = "resourceserver"

func main() {
	os.Exit(cmdline.Execute(context.Background(), newRoot(os.Getenv, os.Environ()), os.Args[1:],
		cmdline.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// newRoot builds the command tree; environ (os.Environ) only names the
// LINKSLOT_ variables nobody reads.
func newRoot(getenv config.Getenv, environ []string) *cobra.Command {
	var readyFile string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the MCP endpoint on LINKSLOT_RS_LISTEN (the default command)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), cmd.ErrOrStderr(), getenv, environ, readyFile)
		},
	}
	serve.Flags().StringVar(&readyFile, "ready-file", "", "once listening, write the address to this file (for scripts that wait for the server)")
	migrate := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and exit",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromEnv(getenv)
			if err != nil {
				return err
			}
			log := app.Logger(cmd.ErrOrStderr(), cfg.LogFormat).With("server", prog)
			app.WarnUnknownVariables(log, environ)
			s, err := app.OpenStore(cmd.Context(), cfg, log, true)
			if err != nil {
				return err
			}
			defer s.Close()
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "database schema is current (%s)\n", sqlstore.Where(cfg.DatabaseURL))
			return err
		},
	}
	root := &cobra.Command{
		Use:   prog,
		Short: "Linkslot's MCP resource server",
		Long: `Linkslot's MCP resource server: the MCP endpoint and its protected-resource metadata.
Without a command it serves. Configuration comes from LINKSLOT_* environment
variables (see the README); --help never reads it.`,
		RunE: serve.RunE,
	}
	root.AddCommand(serve, migrate)
	return root
}

func serve(ctx context.Context, stderr io.Writer, getenv config.Getenv, environ []string, readyFile string) error {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return err
	}
	log := app.Logger(stderr, cfg.LogFormat).With("server", prog)
	app.WarnUnknownVariables(log, environ)
	// The store before the secret key, so that a start where there is no
	// database creates nothing there (app.OpenStore).
	s, err := app.OpenStore(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := cfg.EnsureSecretKey(); err != nil {
		return err
	}
	// The address next: a taken one ends the start before anything runs.
	l, err := app.Listen(cfg.RSListen)
	if err != nil {
		return fmt.Errorf("LINKSLOT_RS_LISTEN: %w", err)
	}
	defer l.Close()
	m := metrics.New(prog)
	m.RegisterDB("main", s.SQL())
	if err := app.StartJanitor(ctx, prog, s, m, log); err != nil {
		return err
	}
	h, err := rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: log, Metrics: m})
	if err != nil {
		return err
	}
	if err := app.ServeMetrics(ctx, cfg.RSMetricsListen, m.Handler(), log); err != nil {
		return fmt.Errorf("LINKSLOT_RS_METRICS_LISTEN: %w", err)
	}
	log.Info("resource server listening", "addr", l.Addr().String(), "resource", cfg.Resource, "issuer", cfg.Issuer, "database", sqlstore.Where(cfg.DatabaseURL))
	unready, err := app.WriteReadyFile(readyFile, l)
	if err != nil {
		return err
	}
	defer unready()
	return app.Serve(ctx, l, h, cfg.ShutdownTimeout, log)
}
