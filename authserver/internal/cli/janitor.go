package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/janitor"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

func newJanitorCmd(e *env) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "janitor --once",
		Short: "Delete expired token sessions and idempotency records now, in bounded batches (every server also does it each minute)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !once {
				return cmdline.Usagef("janitor runs inside every server; use --once to run one complete pass now (for example from cron)")
			}
			s, err := e.openStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			return janitorOnce(cmd.Context(), s, cmd)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "run one complete pass and exit")
	return cmd
}

// janitorOnce runs one complete pass and prints what each task deleted; a
// task another replica is running is reported as skipped.
func janitorOnce(ctx context.Context, s *sqlstore.Store, cmd *cobra.Command) error {
	j, err := janitor.New(janitor.Config{Leases: s, Tasks: janitor.Tasks(s)})
	if err != nil {
		return err
	}
	var failed error
	for _, r := range j.RunOnce(ctx) {
		switch {
		case r.Err != nil:
			fmt.Fprintf(cmd.OutOrStdout(), "%-28s %d deleted, then failed: %v\n", r.Task, r.Deleted, r.Err)
			failed = fmt.Errorf("janitor: %s: %w", r.Task, r.Err)
		case r.Skipped:
			fmt.Fprintf(cmd.OutOrStdout(), "%-28s skipped: another process is running it\n", r.Task)
		default:
			fmt.Fprintf(cmd.OutOrStdout(), "%-28s %d deleted\n", r.Task, r.Deleted)
		}
	}
	return failed
}
