package admincli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/cmdline"
)

func usersCmd(env Env) *cobra.Command {
	return group("users", "Create accounts and grant the admin role", userCreateCmd(env), userSetAdminCmd(env))
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
