package admincli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/admincli"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestClientNamesPrintedVisibly: a client whose stored name holds a
// terminal escape sequence, a right-to-left override, CR and a tab is
// listed and shown with those characters spelled out, never sent raw.
func TestClientNamesPrintedVisibly(t *testing.T) {
	st := sqltest.SQLite(t)
	now := time.Now()
	name := "Claude\x1b]0;pwned\x07\x1b[2J\u202eMOC.TFOSORCIM\r\tx"
	if err := st.CreateClient(context.Background(), store.Client{ID: "spoof", Name: name, Public: true,
		RedirectURIs: []string{"http://127.0.0.1/cb"}, AllowedScopes: []string{"openid"}, GrantTypes: admin.DefaultGrantTypes,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	want := `Claude\x1b]0;pwned\x07\x1b[2JU+202EMOC.TFOSORCIM\r\tx`
	for _, args := range [][]string{{"clients", "list"}, {"clients", "show", "spoof"}} {
		root := &cobra.Command{Use: "authserver"}
		root.AddCommand(admincli.Commands(admincli.Env{Service: func(context.Context) (*admin.Service, error) { return svc, nil }})...)
		var out, errb bytes.Buffer
		if code := cmdline.Execute(context.Background(), root, args, cmdline.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%v does not show the name visibly (want %q):\n%q", args, want, out.String())
		}
		for _, r := range out.String() {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("%v sent %U to the terminal:\n%q", args, r, out.String())
			}
		}
	}
}
