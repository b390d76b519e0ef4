// Package cmdline runs a spf13/cobra command tree the way both Linkslot
// binaries behave:
//
//   - --help, help and completion never read the configuration nor touch a
//     database: a command opens what it needs inside its RunE, never in
//     init, PersistentPreRun or while building the tree.
//   - A mistake in the command line (unknown command or flag, a missing or
//     extra argument, a value out of range) prints the message, the
//     command's usage line and a pointer to --help on standard error, and
//     exits 2. A command reports such a mistake by returning Usagef(...).
//   - Any other failure prints "prog: message" on one line and exits 1; a
//     domain failure (*problem.Error) reads "prog: not found: message",
//     its code in words.
//   - A command takes no positional arguments unless it sets Args; a group
//     (a command that only holds subcommands) prints its help when called
//     alone and refuses an unknown subcommand with exit 2.
//   - `completion bash|zsh|fish|powershell` prints a shell completion
//     script (cobra's default command).
//
// Commands write to cmd.OutOrStdout() and read cmd.InOrStdin(), so tests
// drive the same tree with buffers (see Run).
package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/problem"
)

// IO is a command's standard streams, and its environment as os.Environ
// lists it.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Environ is read only to name the LINKSLOT_ variables nobody reads
	// (config.Unknown); the configuration itself comes from the lookup
	// each binary is given. Nil (tests with a map) checks nothing.
	Environ []string
}

// ErrUsage is matched (errors.Is) by every command-line mistake.
var ErrUsage = errors.New("usage")

type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == ErrUsage }

// Usagef reports a mistake in the command line: the process exits 2 and
// prints the command's usage line after the message.
func Usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// ranError marks an error returned by a command's own RunE: anything else
// that cobra returns (flag parsing, argument checks, unknown commands) is a
// usage mistake.
type ranError struct{ err error }

func (e ranError) Error() string { return e.err.Error() }
func (e ranError) Unwrap() error { return e.err }

// Run executes root with args and returns the command that ran (or was
// being parsed) and its error; mistakes in the command line match
// ErrUsage. Execute is the same with the exit status and the messages.
func Run(ctx context.Context, root *cobra.Command, args []string, st IO) (*cobra.Command, error) {
	prepare(root)
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root.SetArgs(args)
	if st.Stdin != nil {
		root.SetIn(st.Stdin)
	}
	if st.Stdout != nil {
		root.SetOut(st.Stdout)
	}
	if st.Stderr != nil {
		root.SetErr(st.Stderr)
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return cmd, nil
	}
	var ran ranError
	if errors.As(err, &ran) {
		return cmd, ran.err
	}
	if errors.Is(err, ErrUsage) {
		return cmd, err
	}
	return cmd, usageError{err}
}

// Execute runs root with args and returns the process exit status: 0, 1
// for a failure, 2 for a mistake in the command line.
func Execute(ctx context.Context, root *cobra.Command, args []string, st IO) int {
	cmd, err := Run(ctx, root, args, st)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	if errors.Is(err, ErrUsage) {
		fmt.Fprintf(st.Stderr, "%s: %v\nusage: %s\nRun '%s --help' for more.\n", root.Name(), err, cmd.UseLine(), cmd.CommandPath())
		return 2
	}
	fmt.Fprintf(st.Stderr, "%s: %s\n", root.Name(), describe(err))
	return 1
}

// describe is how a failure reads on standard error: a domain failure
// (*problem.Error) names its code in words, "not found: client \"x\"",
// as the admin commands have always printed them; a refused input lists
// its problems ("invalid input, 2 problems: …"); anything else reads as
// it is.
func describe(err error) string {
	msg := err.Error()
	if pe, ok := problem.As(err); ok && len(pe.Problems) == 0 {
		msg = strings.Replace(msg, pe.Error(), strings.ReplaceAll(pe.Code, "_", " ")+": "+pe.Message, 1)
	}
	return msg
}

// prepare applies the package's rules to every command of the tree once.
func prepare(root *cobra.Command) {
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Annotations["cmdline.prepared"] == "" {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations["cmdline.prepared"] = "yes"
			if c.Run == nil && c.RunE == nil && c.HasSubCommands() {
				c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			}
			if c.Args == nil && c.HasParent() {
				c.Args = cobra.NoArgs
			}
			if run := c.RunE; run != nil {
				c.RunE = func(cmd *cobra.Command, args []string) error {
					if err := run(cmd, args); err != nil {
						if errors.Is(err, ErrUsage) {
							return err
						}
						return ranError{err}
					}
					return nil
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// ExactArgs requires exactly n positional arguments, naming what they are
// in the message ("give exactly one client id").
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("%s: give exactly %s", cmd.CommandPath(), what)
		}
		return nil
	}
}

// MaxArgs allows at most n positional arguments.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return Usagef("%s: unexpected argument %q", cmd.CommandPath(), args[n])
		}
		return nil
	}
}

// Values completes a flag or argument from a fixed list, without touching
// anything else.
func Values(vals ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
}
