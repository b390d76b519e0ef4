// Package cli is the authserver command line, on spf13/cobra: serve (the
// default), migrate, demo, keys rotate, janitor --once, and the administration commands
// (clients, users, catalog, audit), which internal/admin/admincli mounts so
// that the admin pages, the JSON API and the CLI share one audited code
// path. `authserver completion bash|zsh|fish|powershell` prints a shell
// completion script.
//
// internal/cmdline holds the rules every command follows: --help and
// completion never read the configuration or open the database (commands
// do that in their RunE, through env); a command-line mistake prints the
// usage line and exits 2; any other failure is one line and exit 1. Every
// command reads the configuration once (all problems reported together),
// and a database that cannot be opened, reached or migrated ends the
// command with one clear line before anything listens.
//
// Adding a command: an administrative one goes into admincli (see its
// package doc). Any other one is a func newXCmd(e *env) *cobra.Command in
// its own file here, added to the AddCommand list in newRoot; its RunE
// calls e.config() and e.store(ctx) for what it needs, prints to
// cmd.OutOrStdout(), and returns cmdline.Usagef for a bad command line.
// A row in TestCommands drives it through Run.
package cli

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/admincli"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// IO is the command's standard streams.
type IO = cmdline.IO

// Run runs one command line (without the program name) and returns the
// process exit status: 0, 1 for a failure, 2 for a usage mistake.
func Run(ctx context.Context, args []string, getenv config.Getenv, st IO) int {
	e := &env{&app.CommandEnv{Getenv: getenv, Stderr: st.Stderr, Environ: st.Environ, SecretKey: true}}
	defer e.Close()
	return cmdline.Execute(ctx, newRoot(e), args, st)
}

func newRoot(e *env) *cobra.Command {
	serve := newServeCmd(e)
	root := &cobra.Command{
		Use:   "authserver",
		Short: "Linkslot's OAuth 2.1 / OpenID Connect authorization server and its administration",
		Long: `Linkslot's OAuth 2.1 / OpenID Connect authorization server and its administration.
Without a command it serves. Configuration comes from LINKSLOT_* environment
variables (docs/reference.md §1); --help never reads it.`,
		RunE: serve.RunE,
	}
	root.AddCommand(serve, app.MigrateCommand(e.CommandEnv, "Apply pending database migrations"), newDemoCmd(e), newKeysCmd(e), newJanitorCmd(e))
	root.AddCommand(admincli.Commands(admincli.Env{Service: e.adminService})...)
	return root
}

// env is what commands share during one run: the configuration, read once
// when a command first asks for it (naming the LINKSLOT_ variables nobody
// reads), and the store, opened once (then making sure a secret key
// exists) and closed when Run returns (app.CommandEnv).
type env struct {
	*app.CommandEnv
}

func (e *env) config() (config.Config, *slog.Logger, error) { return e.Config() }

func (e *env) openStore(ctx context.Context, migrate bool) (*sqlstore.Store, error) {
	return e.OpenStore(ctx, migrate)
}

func (e *env) adminService(ctx context.Context) (*admin.Service, error) {
	s, err := e.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	cfg, _, err := e.config()
	if err != nil {
		return nil, err
	}
	return app.AdminService(cfg, s, cimd.NewResolver(nil, cimd.Options{Development: !cfg.Production}))
}
