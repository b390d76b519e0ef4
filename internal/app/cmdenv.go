package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// CommandEnv is what the commands of one command-line run share, in both
// servers' command lines: the configuration, read once when a command
// first asks for it (all problems together, and the LINKSLOT_ variables
// nobody reads named), and the store, opened once and closed by Close.
type CommandEnv struct {
	Getenv config.Getenv
	Stderr io.Writer // the logger's
	// Environ is the process's environment (os.Environ), read only to
	// name the LINKSLOT_ variables nobody reads (WarnUnknownVariables).
	Environ []string
	// SecretKey set: OpenStore makes sure a secret key exists once the
	// store is open (the authorization server's every command).
	SecretKey bool
	// LogWith are the logger's attributes (nil: none).
	LogWith []any

	cfg   *config.Config
	log   *slog.Logger
	store *sqlstore.Store
}

// Config reads and validates the configuration, once, and warns of each
// LINKSLOT_ variable of Environ that Linkslot does not read.
func (e *CommandEnv) Config() (config.Config, *slog.Logger, error) {
	if e.cfg != nil {
		return *e.cfg, e.log, nil
	}
	cfg, err := config.FromEnv(e.Getenv)
	if err != nil {
		return config.Config{}, nil, err
	}
	e.cfg, e.log = &cfg, Logger(e.Stderr, cfg.LogFormat)
	if len(e.LogWith) > 0 {
		e.log = e.log.With(e.LogWith...)
	}
	WarnUnknownVariables(e.log, e.Environ)
	return cfg, e.log, nil
}

// OpenStore opens the database once, refusing a schema that is not
// current and an SQLite file that is not there (migrate set: applying
// pending migrations first, creating the file), each error naming the
// database (OpenStore). With SecretKey set it then makes sure a secret
// key exists (EnsureSecretKey).
func (e *CommandEnv) OpenStore(ctx context.Context, migrate bool) (*sqlstore.Store, error) {
	if e.store != nil {
		return e.store, nil
	}
	cfg, log, err := e.Config()
	if err != nil {
		return nil, err
	}
	s, err := OpenStore(ctx, cfg, log, migrate)
	if err != nil {
		return nil, err
	}
	e.store = s
	if e.SecretKey {
		if _, err := e.EnsureSecretKey(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// EnsureSecretKey makes sure the configuration has a secret key
// (config.EnsureSecretKey: in development one is created under
// LINKSLOT_VAR_DIR) and returns the configuration with it. Call it only
// once the store is open, so that a command run where there is no
// database creates nothing there.
func (e *CommandEnv) EnsureSecretKey() (config.Config, error) {
	if _, _, err := e.Config(); err != nil {
		return config.Config{}, err
	}
	if err := e.cfg.EnsureSecretKey(); err != nil {
		return config.Config{}, fmt.Errorf("secret key: %w", err)
	}
	return *e.cfg, nil
}

// Close closes the store, if one was opened.
func (e *CommandEnv) Close() {
	if e.store != nil {
		e.store.Close()
	}
}

// MigrateCommand is both servers' `migrate`: it says which database is
// current (sqlstore.Where).
func MigrateCommand(e *CommandEnv, short string) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: short,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := e.OpenStore(cmd.Context(), true); err != nil {
				return err
			}
			cfg, _, _ := e.Config()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "database schema is current (%s)\n", sqlstore.Where(cfg.DatabaseURL))
			return err
		},
	}
}
