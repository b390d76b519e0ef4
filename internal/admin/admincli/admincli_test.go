package admincli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/admincli"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestArguments: how each command's arguments are read and checked. A
// command-line mistake exits 2 with the usage line and never opens the
// service; a refused input exits 1 with every problem; the rest reach the
// service. All rows run in order against one real store.
func TestArguments(t *testing.T) {
	svc, err := admin.New(admin.Config{Store: sqltest.SQLite(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		opened bool     // the service was asked for
		stderr []string // substrings
		stdout string
	}{
		{name: "show without an id", args: []string{"clients", "show"}, code: 2,
			stderr: []string{"give exactly one client id", "usage: authserver clients show ID"}},
		{name: "show with two ids", args: []string{"clients", "show", "a", "b"}, code: 2, stderr: []string{"usage: authserver clients show ID"}},
		{name: "create: id as flag and argument", args: []string{"clients", "create", "--id", "a", "b"}, code: 2,
			stderr: []string{`unexpected argument "b"`}},
		{name: "create: every problem together", args: []string{"clients", "create", "--id", "has space", "--redirect-uri", "http://evil.example/cb"},
			code: 1, opened: true, stderr: []string{"invalid input, ", "problems:\n", "id: client id", "name: name is required", "redirect_uris:"}},
		{name: "create a public client", args: []string{"clients", "create", "agent", "--name", "Agent", "--public",
			"--redirect-uri", "http://127.0.0.1/cb", "--allowed-scopes", "openid bookings:read"}, code: 0, opened: true, stdout: "agent"},
		{name: "create it again", args: []string{"clients", "create", "agent", "--name", "Agent", "--public",
			"--redirect-uri", "http://127.0.0.1/cb", "--allowed-scopes", "openid"}, code: 1, opened: true,
			stderr: []string{`already exists: a client with id "agent" is already registered`}},
		{name: "show an unknown client", args: []string{"clients", "show", "nope"}, code: 1, opened: true, stderr: []string{"not found"}},
		{name: "list as JSON", args: []string{"clients", "list", "--json"}, code: 0, opened: true, stdout: `"clients": [`},
		{name: "unknown flag", args: []string{"clients", "list", "--bogus"}, code: 2, stderr: []string{"unknown flag: --bogus"}},
		{name: "users create without --email", args: []string{"users", "create", "--password-stdin"}, code: 2,
			stderr: []string{"--email is required"}},
		{name: "users create without --password-stdin", args: []string{"users", "create", "--email", "ada@example.com"}, code: 2,
			stderr: []string{"--password-stdin is required"}},
		{name: "users create: bad email and password", args: []string{"users", "create", "--email", "ada", "--password-stdin"},
			stdin: "short\n", code: 1, opened: true, stderr: []string{"invalid input, 2 problems:", "email: Enter a valid email address",
				"password: Choose a stronger password: use at least"}},
		{name: "users create", args: []string{"users", "create", "--email", "ada@example.com", "--password-stdin"},
			stdin: "a long enough password\n", code: 0, opened: true, stdout: "ada@example.com"},
		{name: "users create a taken address", args: []string{"users", "create", "--email", "ADA@example.com", "--password-stdin"},
			stdin: "a long enough password\n", code: 1, opened: true, stderr: []string{"already exists"}},
		{name: "audit --limit not a number", args: []string{"audit", "list", "--limit", "many"}, code: 2, stderr: []string{"--limit"}},
		{name: "catalog import without a file", args: []string{"catalog", "import"}, code: 2, stderr: []string{"one file"}},
		{name: "catalog import: progress on standard error", args: []string{"catalog", "import", "-", "--format", "json"},
			stdin: string(testkit.CatalogFile(250)), code: 0, opened: true, stdout: "Imported 250 business(es)",
			stderr: []string{"imported 100/250 businesses…\n", "imported 200/250 businesses…\n", "imported 250/250 businesses…\n"}},
		{name: "catalog import: over the businesses limit", args: []string{"catalog", "import", "-", "--format", "json"},
			stdin: string(testkit.CatalogFile(10001)), code: 1, opened: true,
			stderr: []string{"request too large: the catalog file lists 10001 businesses; one import takes at most 10000"}},
		{name: "catalog feed-url without --business", args: []string{"catalog", "feed-url"}, code: 2, stderr: []string{"--business is required"}},
		{name: "webhooks create without --url", args: []string{"webhooks", "create", "--business", "b"}, code: 2,
			stderr: []string{"--business and --url are required"}},
		{name: "webhooks update with nothing to change", args: []string{"webhooks", "update", "wh-1"}, code: 2,
			stderr: []string{"give --url, --events or both"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opened := false
			root := &cobra.Command{Use: "authserver"}
			root.AddCommand(admincli.Commands(admincli.Env{Service: func(context.Context) (*admin.Service, error) {
				opened = true
				return svc, nil
			}})...)
			var out, errb bytes.Buffer
			code := cmdline.Execute(context.Background(), root, tt.args,
				cmdline.IO{Stdin: strings.NewReader(tt.stdin), Stdout: &out, Stderr: &errb})
			if code != tt.code || opened != tt.opened || !strings.Contains(out.String(), tt.stdout) {
				t.Fatalf("exit %d (want %d), service opened %v (want %v)\nstdout %s\nstderr %s", code, tt.code, opened, tt.opened, out.String(), errb.String())
			}
			for _, want := range tt.stderr {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errb.String())
				}
			}
		})
	}
}
