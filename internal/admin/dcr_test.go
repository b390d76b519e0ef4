package admin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestDynamicClientsCLI: `authserver clients list` and `clients show` give
// a client that registered itself the kind dcr.
func TestDynamicClientsCLI(t *testing.T) {
	s := sqltest.SQLite(t)
	svc := newService(t, s)
	reg, err := dcr.New(s, dcr.Options{}).Register(context.Background(),
		[]byte(`{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback"]}`), "192.0.2.9")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(mustRun(t, svc, "", "clients", "list"), "\n") {
		if strings.Contains(l, reg.ClientID) {
			row = l
		}
	}
	if !strings.Contains(row, "Cursor") || !strings.Contains(row, " dcr ") {
		t.Fatalf("list row %q, want the client with kind dcr", row)
	}
	if out := mustRun(t, svc, "", "clients", "show", reg.ClientID); !strings.Contains(out, "Type:            dcr") {
		t.Fatalf("show:\n%s", out)
	}
}
