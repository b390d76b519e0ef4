package cmdline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/problem"
)

func tree(ran *[]string) *cobra.Command {
	root := &cobra.Command{Use: "prog"}
	var n int
	do := &cobra.Command{Use: "do NAME", Args: cmdline.ExactArgs(1, "one name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			*ran = append(*ran, args[0])
			switch args[0] {
			case "fail":
				return errors.New("it broke")
			case "bad":
				return cmdline.Usagef("--n must be positive")
			case "missing":
				return problem.New("not_found", `client "x"`)
			case "taken":
				return fmt.Errorf("import: %w", problem.New("already_exists", `an account with email "a@example.com" exists`))
			}
			return nil
		}}
	do.Flags().IntVar(&n, "n", 1, "count")
	grp := &cobra.Command{Use: "grp", Short: "a group"}
	grp.AddCommand(do)
	root.AddCommand(grp)
	return root
}

func TestExecute(t *testing.T) {
	for _, tt := range []struct {
		args           []string
		code           int
		ran            string
		stdout, stderr string
	}{
		{[]string{"grp", "do", "x"}, 0, "x", "", ""},
		{[]string{"grp", "do", "fail"}, 1, "fail", "", "prog: it broke\n"},
		{[]string{"grp", "do", "missing"}, 1, "missing", "", "prog: not found: client \"x\"\n"},
		{[]string{"grp", "do", "taken"}, 1, "taken", "", "prog: import: already exists: an account with email \"a@example.com\" exists\n"},
		{[]string{"grp", "do", "bad"}, 2, "bad", "", "prog: --n must be positive\nusage: prog grp do NAME [flags]\nRun 'prog grp do --help' for more.\n"},
		{[]string{"grp", "do"}, 2, "", "", "give exactly one name"},
		{[]string{"grp", "do", "x", "--n", "many"}, 2, "", "", `invalid argument "many"`},
		{[]string{"grp", "nope"}, 2, "", "", `unknown command "nope" for "prog grp"`},
		{[]string{"nope"}, 2, "", "", `unknown command "nope" for "prog"`},
		{[]string{"grp"}, 0, "", "do", ""},
		{[]string{"grp", "do", "--help"}, 0, "", "--n int", ""},
	} {
		var ran []string
		var out, errb bytes.Buffer
		code := cmdline.Execute(context.Background(), tree(&ran), tt.args, cmdline.IO{Stdout: &out, Stderr: &errb})
		if code != tt.code || strings.Join(ran, ",") != tt.ran || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%v: exit %d (want %d), ran %v\nstdout %q\nstderr %q", tt.args, code, tt.code, ran, out.String(), errb.String())
		}
		if tt.code == 1 && strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: a failure is one line: %q", tt.args, errb.String())
		}
	}
}
