package admincli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func auditCmd(env Env) *cobra.Command {
	return group("audit", "Read the audit log of administrative actions", auditListCmd(env))
}

func auditListCmd(env Env) *cobra.Command {
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "list [--limit N] [--offset N]",
		Short: "List audit events, newest first",
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			evs, more, err := svc.ListAudit(cmd.Context(), limit, offset)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"events": evs, "has_more": more})
			}
			return table(cmd.OutOrStdout(), "TIME\tACTOR\tACTION\tTARGET", func(tw io.Writer) {
				for _, e := range evs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.CreatedAt.Format("2006-01-02 15:04:05Z"), e.ActorID, e.Action, e.Target)
				}
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "events to show (1-200)")
	cmd.Flags().IntVar(&offset, "offset", 0, "events to skip")
	return cmd
}
