package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/internal/cli"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, func(k string) string { return env[k] },
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"),
		"LINKSLOT_SECRET_KEY":   "0123456789abcdef0123456789abcdef",
		"LINKSLOT_AUTH_LISTEN":  "127.0.0.1:0",
	}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		stderr   string // substring
		stdout   string
	}{
		{"serve refuses a missing database", env, []string{"serve"}, 1, "no database at " + filepath.Join(dir, "db.sqlite") + "; run `authserver migrate`", ""},
		{"bad database URL", map[string]string{"LINKSLOT_DATABASE_URL": "mysql://x"}, []string{"migrate"}, 1, "LINKSLOT_DATABASE_URL", ""},
		{"unknown command", env, []string{"bogus"}, 2, `unknown command "bogus"`, ""},
		{"migrate", env, []string{"migrate"}, 0, "", "database schema is current"},
		{"keys rotate", env, []string{"keys", "rotate"}, 0, "", "signing key"},
		{"keys rotate: both token algorithms", env, []string{"keys", "rotate"}, 0, "", "new token-rs256 signing key token-rs256-"},
		{"keys rotate grant", env, []string{"keys", "rotate", "--purpose", "grant"}, 0, "", "grant signing key"},
		{"keys rotate bad purpose", env, []string{"keys", "rotate", "--purpose", "x"}, 2, "--purpose", ""},
		{"clients list via admin", env, []string{"clients", "list"}, 0, "", ""},
		{"clients create --id-token-alg", env, []string{"clients", "create", "--id", "rp", "--name", "RP", "--public",
			"--redirect-uri", "https://rp.example/cb", "--allowed-scopes", "openid", "--id-token-alg", "RS256"}, 0, "", "ID token algorithm:  RS256"},
		{"clients update --id-token-alg", env, []string{"clients", "update", "rp", "--id-token-alg", "ES256"}, 0, "", "ID token algorithm:  ES256"},
		{"clients update --id-token-alg bad", env, []string{"clients", "update", "rp", "--id-token-alg", "HS256"}, 1,
			`id_token_signed_response_alg "HS256" is not supported (ES256 or RS256)`, ""},
		{"unknown flag", env, []string{"clients", "list", "--bogus"}, 2, "unknown flag: --bogus\nusage: authserver clients list", ""},
		{"unknown subcommand", env, []string{"clients", "frobnicate"}, 2, `unknown command "frobnicate" for "authserver clients"`, ""},
		{"missing argument", env, []string{"clients", "show"}, 2, "give exactly one client id\nusage: authserver clients show ID", ""},
		{"extra argument", env, []string{"migrate", "now"}, 2, `unknown command "now"`, ""},
		{"clients --json kept", env, []string{"clients", "list", "--json"}, 0, "", `"clients": [`},
		{"janitor --once", env, []string{"janitor", "--once"}, 0, "", "token_sessions.refresh_token 0 deleted\nidempotency_records          0 deleted"},
		{"janitor without --once", env, []string{"janitor"}, 2, "use --once", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.env, tt.args...)
			if code != tt.wantCode || !strings.Contains(errOut, tt.stderr) || !strings.Contains(out, tt.stdout) {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", code, tt.wantCode, out, errOut)
			}
			if tt.wantCode == 1 && strings.Count(strings.TrimSpace(errOut), "\n") > 2 && !strings.Contains(errOut, "configuration problems") {
				t.Fatalf("more than one line of error: %q", errOut)
			}
		})
	}
}

// TestHelpTouchesNothing: every --help, help and completion answers on a
// machine with no configuration and no database, and creates neither the
// database nor a secret key.
func TestHelpTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LINKSLOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "db.sqlite"),
		"LINKSLOT_VAR_DIR":      filepath.Join(dir, "var"),
	}
	for _, tt := range []struct {
		args   []string
		stdout []string
	}{
		{[]string{"--help"}, []string{"serve", "migrate", "keys", "clients", "users", "catalog", "audit", "completion"}},
		{[]string{"help"}, []string{"clients"}},
		{[]string{"clients", "--help"}, []string{"create", "list", "rotate-secret", "--json"}},
		{[]string{"clients"}, []string{"create"}},
		{[]string{"help", "clients", "create"}, []string{"--redirect-uri", "--public"}},
		{[]string{"clients", "create", "--help"}, []string{"--redirect-uri stringArray"}},
		{[]string{"users", "create", "-h"}, []string{"--password-stdin"}},
		{[]string{"catalog", "import", "--help"}, []string{"--format"}},
		{[]string{"keys", "rotate", "--help"}, []string{"--purpose"}},
		{[]string{"serve", "--help"}, []string{"LINKSLOT_AUTH_LISTEN"}},
		{[]string{"completion", "bash"}, []string{"bash completion"}},
		{[]string{"completion", "zsh"}, []string{"#compdef authserver"}},
		{[]string{"__complete", "keys", "rotate", "--purpose", ""}, []string{"token\ngrant"}},
		{[]string{"__complete", "cl"}, []string{"clients"}},
	} {
		code, out, errOut := run(t, env, tt.args...)
		for _, want := range tt.stdout {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("%v: exit %d, stdout lacks %q\nstdout %s\nstderr %s", tt.args, code, want, out, errOut)
			}
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("help created %v", left)
	}
}

// TestKeysRotateIsAudited: `keys rotate` records who (the CLI), what and
// which key, with no key material.
func TestKeysRotateIsAudited(t *testing.T) {
	dir := t.TempDir()
	url := "sqlite://" + filepath.Join(dir, "db.sqlite")
	env := map[string]string{"LINKSLOT_DATABASE_URL": url, "LINKSLOT_SECRET_KEY": "0123456789abcdef0123456789abcdef"}
	for _, args := range [][]string{{"migrate"}, {"keys", "rotate"}, {"keys", "rotate", "--purpose", "grant"}} {
		if code, out, errOut := run(t, env, args...); code != 0 {
			t.Fatalf("%v: exit %d %s %s", args, code, out, errOut)
		}
	}
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, url, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.ListAuditEvents(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	purposes := map[string]bool{}
	for _, e := range evs {
		if e.Action != "keys.rotate" {
			continue
		}
		purpose, kid, _ := strings.Cut(e.Target, "/")
		if e.ActorID != "cli" || !strings.HasPrefix(kid, purpose+"-") || strings.Contains(string(e.After), "private") ||
			strings.Contains(string(e.After), `"d"`) {
			t.Fatalf("audit event: %+v %s", e, e.After)
		}
		var keys []store.SigningKey
		if keys, err = s.ListSigningKeys(ctx, purpose); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.ID == kid && k.RetiredAt != nil {
				t.Fatalf("audited kid %s is not the current key", kid)
			}
		}
		purposes[purpose] = true
	}
	if !purposes["token"] || !purposes["grant"] {
		t.Fatalf("keys.rotate events for %v, want token and grant", purposes)
	}
}
