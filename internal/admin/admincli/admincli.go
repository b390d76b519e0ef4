// Package admincli is the command-line front end of internal/admin: the
// clients, users, catalog and audit commands of `authserver`, on
// spf13/cobra. Like the JSON API (adminapi) and the admin pages
// (consent-ui/admin), it turns its caller into an admin.Actor (ActorCLI)
// and calls the admin.Service; it never writes to the store itself.
//
// The service is reached through Env.Service, which is called only when a
// command runs: --help and shell completion never open the database.
// Command-line mistakes are cmdline.Usagef errors (exit 2 with the usage
// line); refused inputs are the service's *problem.Error values (admin.ProblemsOf lists them).
// Every command takes --json (a persistent flag of each group) for
// machine-readable output.
//
// Adding a command: write a func returning a *cobra.Command in the file of
// its group (clients.go, users.go, catalog.go, audit.go) and add it to the
// group's AddCommand call, or add a new group to Commands with group(...).
// Its RunE reads flags, calls env.Service(ctx) and prints to
// cmd.OutOrStdout(); a test drives it through cmdline.Run (see
// internal/admin's tests).
package admincli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/textout"
)

// Env is what the commands need from the program that mounts them.
type Env struct {
	// Service returns the admin service; it is called only when a command
	// runs (never for --help or completion), and may open the database.
	Service func(ctx context.Context) (*admin.Service, error)
}

// Commands returns the administration command groups, to be added to the
// program's root command.
func Commands(env Env) []*cobra.Command {
	return []*cobra.Command{clientsCmd(env), usersCmd(env), catalogCmd(env), businessesCmd(env), auditCmd(env), webhooksCmd(env), staffCmd(env),
		remindersCmd(env)}
}

// actor is who every CLI command acts as.
var actor = admin.Actor{ID: admin.ActorCLI}

// group is a command that only holds subcommands; it carries --json for
// all of them.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: use, Short: short}
	g.PersistentFlags().Bool("json", false, "print JSON")
	g.AddCommand(subs...)
	return g
}

// jsonOut reports whether --json was given.
func jsonOut(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("json")
	return v
}

// flagOrArg lets a command take its subject as a flag or as its one
// positional argument (Args: cmdline.MaxArgs(1)), not both.
func flagOrArg(cmd *cobra.Command, args []string, v *string) error {
	if len(args) == 1 {
		if *v != "" {
			return cmdline.Usagef("%s: unexpected argument %q", cmd.CommandPath(), args[0])
		}
		*v = args[0]
	}
	return nil
}

// splitList splits "a b,c" into [a b c].
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
}

// newTable is a tabwriter whose output reaches w through
// textout.VisibleLines: a control or bidi character in any cell is printed
// as \x1b or U+202E, never sent to the terminal (docs/reference.md §6).
// Free text that may hold a tab or a line break of its own (a name) is
// also given to the table as textout.Visible, so it stays in its cell.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(visibleWriter{w}, 0, 4, 2, ' ', 0)
}

type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(v.w, textout.VisibleLines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes rows under a header, aligned.
func table(w io.Writer, header string, rows func(tw io.Writer)) error {
	tw := newTable(w)
	fmt.Fprintln(tw, header)
	rows(tw)
	return tw.Flush()
}
