package adminui_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestDeletedAccountLabel: once a person deleted their account, the People
// page and the account's page name it "Deleted account" (with its id), not
// the placeholder address.
func TestDeletedAccountLabel(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	if err := e.s.EraseAccount(context.Background(), "acct_person", time.Now()); err != nil {
		t.Fatal(err)
	}
	_, body := e.get("acct_admin", "/admin/users")
	erased := store.ErasedEmail("acct_person")
	if !strings.Contains(body, `">Deleted account</a> <span class="small"><code>acct_person</code></span>`) || !strings.Contains(body, ">deleted<") ||
		strings.Contains(body, ">"+erased+"<") {
		t.Errorf("People page:\n%s", body)
	}
	_, body = e.get("acct_admin", "/admin/users/"+url.PathEscape(erased))
	if !strings.Contains(body, "<h1>Deleted account</h1>") || !strings.Contains(body, ">deleted<") {
		t.Errorf("the account's page:\n%s", body)
	}
}
