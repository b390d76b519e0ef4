package adminui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestClientNameIsolated: a client's name with a right-to-left override is
// isolated in <bdi> on the Clients page and the client's page, so it cannot
// reorder the id and the columns after it.
func TestClientNameIsolated(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	now := time.Now()
	if err := e.s.CreateClient(context.Background(), store.Client{ID: "spoof", Name: "Claude\u202emoc.tfosorcim", Public: true,
		RedirectURIs: []string{"http://127.0.0.1/cb"}, AllowedScopes: []string{"openid"}, GrantTypes: admin.DefaultGrantTypes,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/admin/clients": "\"><bdi>Claude\u202emoc.tfosorcim</bdi></a>",
		"/admin/clients/spoof": "<h1><bdi>Claude\u202emoc.tfosorcim</bdi></h1>"} {
		if _, body := e.get("acct_admin", path); !strings.Contains(body, want) {
			t.Errorf("%s lacks %q:\n%s", path, want, body)
		}
	}
}
