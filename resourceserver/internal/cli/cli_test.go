package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/resourceserver/internal/cli"
)

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"),
		"LINKSLOT_VAR_DIR":      filepath.Join(dir, "var"),
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, func(k string) string { return env[k] },
			cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		return code, out.String(), errb.String()
	}
	for _, tt := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"--help"}, 0, "migrate", ""},
		{[]string{"serve", "--help"}, 0, "LINKSLOT_RS_LISTEN", ""},
		{[]string{"completion", "fish"}, 0, "complete -c resourceserver", ""},
		{[]string{"--bogus"}, 2, "", "unknown flag: --bogus\nusage: resourceserver"},
		{[]string{"bogus"}, 2, "", `unknown command "bogus" for "resourceserver"`},
	} {
		code, out, errOut := run(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout %s\nstderr %s", tt.args, code, tt.code, out, errOut)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("help created %v", left)
	}
	if code, out, errOut := run("migrate"); code != 0 || !strings.Contains(out, "database schema is current (SQLite file "+filepath.Join(dir, "db.sqlite")+")") {
		t.Errorf("migrate: exit %d\n%s%s", code, out, errOut)
	}
}

// TestServeWhereNoDatabase: serve from a folder without the database says
// where it looked and creates nothing there (docs/reference.md §15).
func TestServeWhereNoDatabase(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), []string{"serve"}, func(k string) string { return "" },
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Environ: []string{"LINKSLOT_RS_LISTN=127.0.0.1:9"}})
	want := "no database at " + filepath.Join(dir, "var", "linkslot.db") + " (LINKSLOT_DATABASE_URL=sqlite://var/linkslot.db is relative to the working folder " + dir + ")"
	if code != 1 || !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "did you mean LINKSLOT_RS_LISTEN?") {
		t.Errorf("exit %d\nstderr %s\nwant %q and the misspelt variable named", code, errb.String(), want)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("serve created %v", left)
	}
}
