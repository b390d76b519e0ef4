package adminapi_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestAPIDynamicClients: a client that registered itself is listed and
// shown as dynamic, and administrators disable, enable and delete it like
// any other; ids of that form cannot be chosen by an administrator.
func TestAPIDynamicClients(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		e := newEnv(t, s, adminapi.NewTokenAuth(adminToken))
		tok := withToken(adminToken)
		reg, err := dcr.New(s, dcr.Options{}).Register(ctx, []byte(`{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback"]}`), "192.0.2.9")
		if err != nil {
			t.Fatal(err)
		}
		code, m, raw := e.do("GET", "/admin/api/clients", "", "", tok)
		if code != http.StatusOK || !strings.Contains(raw, `"id": "`+reg.ClientID+`"`) || !strings.Contains(raw, `"dynamic": true`) {
			t.Fatalf("list: %d %s", code, raw)
		}
		code, m, _ = e.do("GET", "/admin/api/clients/"+reg.ClientID, "", "", tok)
		if c, _ := m["client"].(map[string]any); code != http.StatusOK || c["dynamic"] != true || c["name"] != "Cursor" {
			t.Fatalf("show: %d %v", code, m)
		}
		for _, action := range []string{"disable", "enable"} {
			if code, _, raw := e.do("POST", "/admin/api/clients/"+reg.ClientID+"/"+action, "", "", tok); code != http.StatusOK {
				t.Fatalf("%s: %d %s", action, code, raw)
			}
		}
		if code, _, raw := e.do("POST", "/admin/api/clients", "application/json",
			`{"id":"dcr-mine","name":"Mine","public":true,"redirect_uris":["https://x.example/cb"],"allowed_scopes":["openid"]}`, tok); code != http.StatusBadRequest ||
			!strings.Contains(raw, "register themselves") {
			t.Fatalf("an administrator chose a dcr- id: %d %s", code, raw)
		}
		if code, _, raw := e.do("DELETE", "/admin/api/clients/"+reg.ClientID, "", "", tok); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("delete: %d %s", code, raw)
		}
		if _, err := s.GetClientRegistration(ctx, reg.ClientID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the registration outlived the admin's delete: %v", err)
		}
		evs, err := s.ListAuditEvents(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, ev := range evs {
			actions = append(actions, ev.ActorID+" "+ev.Action)
		}
		slices.Sort(actions) // the service's clock is not the registration's
		want := "admin-token client.delete, admin-token client.disable, admin-token client.enable, dcr client.register_dynamic"
		if got := strings.Join(actions, ", "); got != want {
			t.Fatalf("audit %s, want %s", got, want)
		}
	})
}
