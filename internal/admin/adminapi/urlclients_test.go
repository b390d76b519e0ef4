package adminapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// POST /admin/api/clients with client_id_url registers a URL client (here
// from a pinned document, so nothing is fetched); it is then read, disabled
// and deleted by its URL.
func TestAPIRegisterURLClient(t *testing.T) {
	s := sqltest.SQLite(t)
	e := newEnv(t, s, adminapi.NewTokenAuth(adminToken))
	tok := withToken(adminToken)
	const u = "https://chatgpt.com/oauth/client.json"
	body := `{"client_id_url":"` + u + `","allowed_scopes":["openid","bookings:read"],"default_scopes":["bookings:read"],
	  "pinned_document":{"client_id":"` + u + `","client_name":"ChatGPT","redirect_uris":["https://chatgpt.com/connector_platform_oauth_redirect"],
	  "token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://chatgpt.com/oauth/jwks.json"}}`
	st, m, raw := e.do("POST", "/admin/api/clients", "application/json", body, tok)
	if st != http.StatusCreated {
		t.Fatalf("register: %d %s", st, raw)
	}
	c := m["client"].(map[string]any)
	if c["id"] != u || c["name"] != "ChatGPT" || c["client_id_url"] != true || c["pinned_document"] != true || c["public"] != false {
		t.Fatalf("client %v", c)
	}
	path := "/admin/api/clients/" + url.PathEscape(u)
	if st, m, raw := e.do("GET", path, "", "", tok); st != http.StatusOK || m["client"].(map[string]any)["id"] != u {
		t.Fatalf("get by URL: %d %s", st, raw)
	}
	if st, m, raw := e.do("POST", path+"/disable", "", "", tok); st != http.StatusOK || m["client"].(map[string]any)["disabled"] != true {
		t.Fatalf("disable by URL: %d %s", st, raw)
	}
	if st, _, raw := e.do("POST", path+"/enable", "", "", tok); st != http.StatusOK {
		t.Fatalf("enable by URL: %d %s", st, raw)
	}
	if st, _, raw := e.do("POST", "/admin/api/clients", "application/json", body, tok); st != http.StatusConflict {
		t.Fatalf("second register: %d %s", st, raw)
	}
	if st, _, raw := e.do("DELETE", path, "", "", tok); st != http.StatusNoContent && st != http.StatusOK {
		t.Fatalf("delete by URL: %d %s", st, raw)
	}

	// Refusals name the field and change nothing.
	for name, c := range map[string]struct{ body, path string }{
		"plain http":         {`{"client_id_url":"http://agent.example/c.json"}`, "client_id_url"},
		"not a URL":          {`{"client_id_url":"agent"}`, "client_id_url"},
		"pin for another id": {`{"client_id_url":"` + u + `","pinned_document":{"client_id":"https://other.example/c.json","client_name":"X","redirect_uris":["https://x.example/cb"]}}`, "pinned_document"},
		"unknown scope":      {`{"client_id_url":"` + u + `","allowed_scopes":["admin"],"pinned_document":{"client_id":"` + u + `","client_name":"X","redirect_uris":["https://x.example/cb"]}}`, "allowed_scopes"},
		"with a name":        {`{"client_id_url":"` + u + `","name":"Mine"}`, "client_id_url"},
	} {
		st, m, raw := e.do("POST", "/admin/api/clients", "application/json", c.body, tok)
		if st != http.StatusBadRequest || len(problemPaths(m)) == 0 || !strings.HasPrefix(problemPaths(m)[0], c.path+":") {
			t.Errorf("%s: %d %s", name, st, raw)
		}
	}
	if st, m, _ := e.do("GET", "/admin/api/clients", "", "", tok); st != http.StatusOK || len(m["clients"].([]any)) != 0 {
		t.Fatalf("refused registrations left clients: %v", m)
	}
}
