package adminapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestAPIUsers: list with a query and paging, show, disable and enable,
// and the refused inputs.
func TestAPIUsers(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t), adminapi.NewTokenAuth(adminToken))
	tok := withToken(adminToken)
	for _, em := range []string{"ana@example.com", "bob@example.com", "cleo@example.org"} {
		if code, _, raw := e.do("POST", "/admin/api/users", "application/json",
			`{"email":"`+em+`","password":"Person-Passphrase-123"}`, tok); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", em, code, raw)
		}
	}
	code, m, raw := e.do("GET", "/admin/api/users?query=EXAMPLE.COM&limit=1", "", "", tok)
	users, _ := m["users"].([]any)
	if code != 200 || len(users) != 1 || m["has_more"] != true || m["next_offset"] != float64(1) ||
		users[0].(map[string]any)["email"] != "ana@example.com" {
		t.Fatalf("list: %d %s", code, raw)
	}
	if strings.Contains(raw, "argon2") || strings.Contains(raw, "password") {
		t.Fatalf("the list shows a password hash: %s", raw)
	}
	if code, m, _ := e.do("GET", "/admin/api/users?limit=0", "", "", tok); code != 400 || errCode(m) != "invalid_request" {
		t.Errorf("limit=0: %d %v", code, m)
	}
	code, m, raw = e.do("GET", "/admin/api/users/Bob@Example.com", "", "", tok)
	if acct, _ := m["account"].(map[string]any); code != 200 || acct["email"] != "bob@example.com" || m["links"] == nil {
		t.Fatalf("show: %d %s", code, raw)
	}
	if code, m, _ := e.do("GET", "/admin/api/users/nobody@example.com", "", "", tok); code != 404 || errCode(m) != "not_found" {
		t.Errorf("show unknown: %d %v", code, m)
	}
	code, m, raw = e.do("POST", "/admin/api/users/bob@example.com/disable", "", "", tok)
	if acct, _ := m["account"].(map[string]any); code != 200 || acct["disabled"] != true {
		t.Fatalf("disable: %d %s", code, raw)
	}
	code, m, raw = e.do("POST", "/admin/api/users/bob@example.com/enable", "", "", tok)
	if acct, _ := m["account"].(map[string]any); code != 200 || acct["disabled"] != false {
		t.Fatalf("enable: %d %s", code, raw)
	}
	if code, m, _ := e.do("POST", "/admin/api/users/nobody@example.com/disable", "", "", tok); code != 404 || errCode(m) != "not_found" {
		t.Errorf("disable unknown: %d %v", code, m)
	}
	if code, _, _ := e.do("GET", "/admin/api/users", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
}
