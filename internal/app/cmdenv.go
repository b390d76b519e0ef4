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
// first asks for it (all problems together), and the store, opened once
// and closed by Close.
type CommandEnv struct {
	Getenv config.Getenv
	Stderr io.Writer // the logger's
	// Prepare runs once on the configuration read (the authorization
	// server makes sure a secret key exists); nil does nothing.
	Prepare func(*config.Config) error
	// LogWith are the logger's attributes (nil: none).
	LogWith []any

	cfg   *config.Config
	log   *slog.Logger
	store *sqlstore.Store
}

// Config reads and validates the configuration, once.
func (e *CommandEnv) Config() (config.Config, *slog.Logger, error) {
	if e.cfg != nil {
		return *e.cfg, e.log, nil
	}
	cfg, err := config.FromEnv(e.Getenv)
	if err != nil {
		return config.Config{}, nil, err
	}
	if e.Prepare != nil {
		if err := e.Prepare(&cfg); err != nil {
			return config.Config{}, nil, err
		}
	}
	e.cfg, e.log = &cfg, Logger(e.Stderr, cfg.LogFormat)
	if len(e.LogWith) > 0 {
		e.log = e.log.With(e.LogWith...)
	}
	return cfg, e.log, nil
}

// OpenStore opens the database once, refusing a schema that is not
// current (migrate set: applying pending migrations first).
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
	return s, nil
}

// Close closes the store, if one was opened.
func (e *CommandEnv) Close() {
	if e.store != nil {
		e.store.Close()
	}
}

// MigrateCommand is both servers' `migrate`.
func MigrateCommand(e *CommandEnv, short string) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: short,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.OpenStore(cmd.Context(), true)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "database schema is current (%s)\n", s.Dialect())
			return err
		},
	}
}
