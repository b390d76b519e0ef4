package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/internal/cli"
)

// TestNoDatabaseHere: run from a folder without the database, a command
// other than migrate says where it looked and why, and creates nothing
// there (no file, no var/ folder); docs/reference.md §15.
func TestNoDatabaseHere(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	want := "no database at " + filepath.Join(dir, "var", "linkslot.db") +
		" (LINKSLOT_DATABASE_URL=sqlite://var/linkslot.db is relative to the working folder " + dir + "); run `authserver migrate` there"
	for _, args := range [][]string{{"serve"}, {"clients", "list"}, {"demo"}, {"keys", "rotate"}, {"janitor", "--once"}} {
		code, out, errOut := run(t, map[string]string{"LINKSLOT_AUTH_LISTEN": "127.0.0.1:0"}, args...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant %q", args, code, out, errOut, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the commands created %v in %s", left, dir)
	}
	// migrate creates it; then the others find it.
	if code, out, errOut := run(t, nil, "migrate"); code != 0 || !strings.Contains(out, "database schema is current (SQLite file "+filepath.Join(dir, "var", "linkslot.db")+")") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "clients", "list"); code != 0 {
		t.Fatalf("clients list after migrate: exit %d\n%s", code, errOut)
	}
}

// TestStaleSchemaNamesTheDatabase: a database that exists but is not
// migrated is refused with its path in the message.
func TestStaleSchemaNamesTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, map[string]string{"LINKSLOT_DATABASE_URL": "sqlite://" + path}, "clients", "list")
	if want := "database schema is not current in SQLite file " + path + ": run `authserver migrate` first"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
}

// TestUnknownVariableNamed: a misspelt LINKSLOT_ variable is named, with
// the nearest known one, and the command still runs (a warning).
func TestUnknownVariableNamed(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"), "LINKSLOT_VAR_DIR": filepath.Join(dir, "var")}
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] },
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Environ: []string{"LINKSLOT_DATABASE_URL=" + env["LINKSLOT_DATABASE_URL"], "LINKSLOT_DATABSE_URL=sqlite://elsewhere.db", "HOME=/root"}})
	if want := "unknown variable LINKSLOT_DATABSE_URL: did you mean LINKSLOT_DATABASE_URL?"; code != 0 || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d\nstdout %s\nstderr %s\nwant %q", code, out.String(), errb.String(), want)
	}
	if strings.Contains(errb.String(), "LINKSLOT_DATABASE_URL=") || strings.Contains(errb.String(), "elsewhere.db") {
		t.Errorf("the warning shows a value: %s", errb.String())
	}
}

// TestCatalogImportWarnsAndImports: `catalog import` prints a warning
// for a staff member with no hours and for a service nobody performs, and
// imports the file all the same; the sample catalog in docs/ imports with
// no warning (so it stays valid).
func TestCatalogImportWarnsAndImports(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"),
		"LINKSLOT_VAR_DIR":      filepath.Join(dir, "var"),
		"LINKSLOT_SECRET_KEY":   "0123456789abcdef0123456789abcdef",
	}
	if code, _, errOut := run(t, env, "migrate"); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	file := filepath.Join("..", "..", "..", "internal", "catalogfile", "testdata", "warnings.yaml")
	code, out, errOut := run(t, env, "catalog", "import", file)
	for _, want := range []string{
		`warning: businesses[0].staff[1]: staff member "ola" (Ola) has no hours`,
		`warning: businesses[0].services[2]: no staff member performs service "colour" (Colour)`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 0 || !strings.Contains(out, "Imported 2 business(es): north-salon, fjord-table") || !strings.Contains(out, "2 warning(s)") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, out, _ := run(t, env, "catalog", "export"); code != 0 || !strings.Contains(out, "reference: ola") {
		t.Errorf("the warned-of file was not imported whole:\n%s", out)
	}
	code, out, errOut = run(t, env, "catalog", "import", "--json", file)
	if code != 0 || !strings.Contains(out, `"warnings": [`) || !strings.Contains(out, `"path": "businesses[0].staff[1]"`) {
		t.Errorf("--json: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = run(t, env, "catalog", "import", filepath.Join("..", "..", "..", "docs", "sample-catalog.yaml"))
	if code != 0 || strings.Contains(errOut, "warning") || !strings.Contains(out, "Imported 3 business(es): harbour-barbers, lakeside-physio, night-market") {
		t.Errorf("docs/sample-catalog.yaml: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}
