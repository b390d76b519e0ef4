package adminui_test

import (
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestControlCharactersInForms: U+0000 in an admin form answers 400 with
// a message naming the field on both backends and changes nothing; line
// breaks stay allowed in the multi-line fields.
func TestControlCharactersInForms(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		resp, body := e.post("acct_admin", "/admin/clients", form("id", "nul-agent", "name", "Nul\x00Agent", "type", "public",
			"redirect_uris", "http://127.0.0.1/callback\r\nhttps://agent.example/cb",
			"allowed_scopes", "openid", "grant_types", "authorization_code"))
		if resp.StatusCode != 400 || !strings.Contains(body, "control character") || !strings.Contains(body, "name") {
			t.Fatalf("NUL in the name: %d %.300s", resp.StatusCode, body)
		}
		if _, err := s.GetClient(t.Context(), "nul-agent"); err == nil {
			t.Error("the client was registered anyway")
		}
		resp, body = e.post("acct_admin", "/admin/clients", form("id", "tab-agent", "name", "Tab Agent", "type", "public",
			"redirect_uris", "http://127.0.0.1/callback\r\nhttps://agent.example/cb",
			"allowed_scopes", "openid", "grant_types", "authorization_code"))
		if resp.StatusCode == 400 && strings.Contains(body, "control character") {
			t.Errorf("line breaks in redirect_uris refused: %.300s", body)
		}
	})
}
