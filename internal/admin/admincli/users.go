package admincli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cmdline"
)

func usersCmd(env Env) *cobra.Command {
	return group("users", "Find, show, create, disable and enable accounts; grant the admin role", userCreateCmd(env), userSetAdminCmd(env),
		userListCmd(env), userShowCmd(env), userSetDisabledCmd(env, "disable"), userSetDisabledCmd(env, "enable"))
}

func userListCmd(env Env) *cobra.Command {
	var query string
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "list [--query Q] [--limit N] [--offset N]",
		Short: "List accounts by email, optionally those whose email contains Q",
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			us, more, err := svc.ListUsers(cmd.Context(), query, limit, offset)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"users": us, "has_more": more})
			}
			err = table(cmd.OutOrStdout(), "EMAIL\tROLE\tSTATUS\tCREATED", func(tw io.Writer) {
				for _, u := range us {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Email, userRole(u), userStatus(u), u.CreatedAt.Format("2006-01-02"))
				}
			})
			if err == nil && more {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "More accounts match: add --offset %d.\n", offset+len(us))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&query, "query", "", "part of the email address")
	cmd.Flags().IntVar(&limit, "limit", 50, "accounts to show (1-200)")
	cmd.Flags().IntVar(&offset, "offset", 0, "accounts to skip")
	return cmd
}

func userShowCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "show EMAIL",
		Short: "Show one account and its connected apps",
		Args:  cmdline.ExactArgs(1, "one email address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			d, err := svc.GetUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), d)
			}
			out := cmd.OutOrStdout()
			a := d.Account
			fmt.Fprintf(out, "Email:     %s\nID:        %s\nRole:      %s\nStatus:    %s\nCreated:   %s\n\n",
				a.Email, a.ID, userRole(a), userStatus(a), a.CreatedAt.Format("2006-01-02 15:04:05Z"))
			if len(d.Links) == 0 {
				_, err = fmt.Fprintln(out, "No connected apps.")
				return err
			}
			return table(out, "LINK\tCLIENT\tSTATUS\tSCOPES\tLAST USED", func(tw io.Writer) {
				for _, l := range d.Links {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.ID, l.ClientID, l.Status, strings.Join(l.Scopes, " "), l.LastUsedAt.Format("2006-01-02 15:04:05Z"))
				}
			})
		},
	}
}

// userSetDisabledCmd is `users disable EMAIL` or `users enable EMAIL`.
func userSetDisabledCmd(env Env, verb string) *cobra.Command {
	short := "Refuse the account's sign-ins, end its sessions and disconnect its apps"
	if verb == "enable" {
		short = "Let a disabled account sign in again (its apps must be connected again)"
	}
	return &cobra.Command{
		Use:   verb + " EMAIL",
		Short: short,
		Args:  cmdline.ExactArgs(1, "one email address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.SetUserDisabled(cmd.Context(), actor, args[0], verb == "disable")
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			msg := "Account %s enabled.\n"
			if verb == "disable" {
				msg = "Account %s disabled: its sessions ended and its apps were disconnected.\n"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), msg, info.Email)
			return err
		},
	}
}

func userRole(a admin.AccountInfo) string {
	if a.Admin {
		return "administrator"
	}
	return "person"
}

func userStatus(a admin.AccountInfo) string {
	if a.DeletedAt != nil {
		return "deleted (" + a.Label + ")"
	}
	if a.Disabled {
		return "disabled"
	}
	return "active"
}

func userCreateCmd(env Env) *cobra.Command {
	var email string
	var pwStdin, isAdmin bool
	cmd := &cobra.Command{
		Use:   "create --email EMAIL --password-stdin [--admin]",
		Short: "Create an account (the password is read from standard input)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" {
				return cmdline.Usagef("users create: --email is required")
			}
			if !pwStdin {
				return cmdline.Usagef("users create: --password-stdin is required (passwords are never taken from the command line)")
			}
			line, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 4096)).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read password: %w", err)
			}
			pw := strings.TrimRight(line, "\r\n")
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.CreateUser(cmd.Context(), actor, email, pw, isAdmin)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			role := "account"
			if info.Admin {
				role = "administrator account"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Created %s %s (%s).\n", role, info.Email, info.ID)
			return err
		},
	}
	cmd.Flags().StringVar(&email, "email", "", "account email")
	cmd.Flags().BoolVar(&pwStdin, "password-stdin", false, "read the password from the first line of standard input")
	cmd.Flags().BoolVar(&isAdmin, "admin", false, "make the account an administrator")
	return cmd
}

func userSetAdminCmd(env Env) *cobra.Command {
	var email string
	var isAdmin bool
	cmd := &cobra.Command{
		Use:   "set-admin --email EMAIL [--admin=false]",
		Short: "Grant or remove the admin role",
		Args:  cmdline.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flagOrArg(cmd, args, &email); err != nil {
				return err
			}
			if email == "" {
				return cmdline.Usagef("users set-admin: --email is required")
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.SetAdmin(cmd.Context(), actor, email, isAdmin)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			state := "is now an administrator"
			if !info.Admin {
				state = "is no longer an administrator"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s %s.\n", info.Email, state)
			return err
		},
	}
	cmd.Flags().StringVar(&email, "email", "", "account email")
	cmd.Flags().BoolVar(&isAdmin, "admin", true, "grant (true) or remove (false) the admin role")
	return cmd
}
