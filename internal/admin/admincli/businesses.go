package admincli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/cmdline"
)

// businessesCmd is the businesses group: for now their members
// (docs/reference.md §16).
func businessesCmd(env Env) *cobra.Command {
	members := &cobra.Command{Use: "members", Short: "Manage who can open a business's console (owners and staff)"}
	members.AddCommand(membersListCmd(env), membersAddCmd(env), membersRemoveCmd(env))
	return group("businesses", "Businesses and their members", members)
}

func membersListCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list BUSINESS",
		Short: "List a business's members, owners first",
		Args:  cmdline.ExactArgs(1, "one business reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			ms, err := svc.ListMembers(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), ms)
			}
			return table(cmd.OutOrStdout(), "EMAIL\tROLE\tSTAFF\tSINCE", func(tw io.Writer) {
				for _, m := range ms {
					staff := m.Staff
					if staff == "" {
						staff = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Email, m.Role, staff, m.Since.Format("2006-01-02"))
				}
			})
		},
	}
}

func membersAddCmd(env Env) *cobra.Command {
	var staff string
	cmd := &cobra.Command{
		Use:   "add BUSINESS EMAIL [--staff STAFF]",
		Short: "Make an existing account the business's owner (or, with --staff, that staff member)",
		Args:  cmdline.ExactArgs(2, "a business reference and an e-mail address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			m, err := svc.AddMember(cmd.Context(), actor, args[0], args[1], staff)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), m)
			}
			what := "owner"
			if m.Staff != "" {
				what = "staff member " + m.Staff
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s is now %s of %s\n", m.Email, what, m.Business)
			return err
		},
	}
	cmd.Flags().StringVar(&staff, "staff", "", "the staff record's reference: add a staff member instead of an owner")
	return cmd
}

func membersRemoveCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "remove BUSINESS EMAIL",
		Short: "Remove a member from a business (the account stays)",
		Args:  cmdline.ExactArgs(2, "a business reference and an e-mail address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.RemoveMember(cmd.Context(), actor, args[0], args[1]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s is no longer a member of %s\n", args[1], args[0])
			return err
		},
	}
}
