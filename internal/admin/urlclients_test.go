package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

func urlDoc(u, name string) string {
	b, _ := json.Marshal(map[string]any{"client_id": u, "client_name": name,
		"redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback"}, "grant_types": []string{"authorization_code", "refresh_token"}})
	return string(b)
}

func urlService(t *testing.T, s store.Store, host *testkit.DocHost) *admin.Service {
	t.Helper()
	svc, err := admin.New(admin.Config{Store: s, Clock: tickingClock(),
		Documents: cimd.NewResolver(nil, cimd.Options{Development: true, RootCAs: host.CA.Pool()})})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// register-url fetches and checks the document, records the client by its
// URL; list, show, disable, enable and delete work by that URL; every step
// is audited.
func TestRegisterURLClientCLI(t *testing.T) {
	s := sqltest.SQLite(t)
	host := testkit.NewDocHost(t)
	u := host.Put("/oauth/mcp-oauth-client-metadata", http.StatusOK, urlDoc(host.Base+"/oauth/mcp-oauth-client-metadata", "Claude"))
	svc := urlService(t, s, host)

	out := mustRun(t, svc, "", "clients", "register-url", u, "--allowed-scopes", "openid bookings:read", "--default-scopes", "bookings:read")
	for _, want := range []string{u, "Claude", "Type:            url", "Allowed scopes:  openid bookings:read"} {
		if !strings.Contains(out, want) {
			t.Errorf("register-url output lacks %q:\n%s", want, out)
		}
	}
	c, err := s.GetClient(context.Background(), u)
	if err != nil || c.Name != "Claude" || !c.Public || c.OpenLinked || c.PinnedDocument != "" {
		t.Fatalf("record %+v, %v", c, err)
	}
	if _, err := run(t, svc, "", "clients", "register-url", u); !errors.Is(err, admin.ErrAlreadyExists) {
		t.Fatalf("second register-url: %v", err)
	}
	if out := mustRun(t, svc, "", "clients", "list"); !strings.Contains(out, u) || !strings.Contains(out, "url") {
		t.Fatalf("list:\n%s", out)
	}
	if out := mustRun(t, svc, "", "clients", "show", u); !strings.Contains(out, "Claude") {
		t.Fatalf("show:\n%s", out)
	}
	mustRun(t, svc, "", "clients", "disable", u)
	if c, _ := s.GetClient(context.Background(), u); !c.Disabled {
		t.Fatal("not disabled")
	}
	mustRun(t, svc, "", "clients", "enable", u)
	mustRun(t, svc, "", "clients", "delete", u)
	if _, err := s.GetClient(context.Background(), u); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	var actions []string
	for _, e := range auditOf(t, s) {
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, " "); got != "client.register_url client.disable client.enable client.delete" {
		t.Fatalf("audit %q", got)
	}
}

// --pin stores a copy of the document and never fetches; a host that
// refuses fetches (here: 403) is then no obstacle.
func TestRegisterURLClientPinned(t *testing.T) {
	s := sqltest.SQLite(t)
	host := testkit.NewDocHost(t)
	u := host.Put("/refuses.json", http.StatusForbidden, `{"error":"forbidden"}`)
	svc := urlService(t, s, host)

	if _, err := run(t, svc, "", "clients", "register-url", u); err == nil || !strings.Contains(err.Error(), "did not answer with the document") {
		t.Fatalf("unpinned register of a refusing host: %v", err)
	}
	pin := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(pin, []byte(urlDoc(u, "Claude")), 0o600); err != nil {
		t.Fatal(err)
	}
	hits := host.Hits("/refuses.json")
	out := mustRun(t, svc, "", "clients", "register-url", u, "--pin", pin)
	if !strings.Contains(out, "url (pinned)") {
		t.Fatalf("output:\n%s", out)
	}
	if host.Hits("/refuses.json") != hits {
		t.Fatal("a pinned registration fetched the document")
	}
	c, _ := s.GetClient(context.Background(), u)
	if !strings.Contains(c.PinnedDocument, `"client_name":"Claude"`) {
		t.Fatalf("pinned %q", c.PinnedDocument)
	}
	// A pin that breaks the rules is refused, nothing stored.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(urlDoc(host.Base+"/other.json", "Claude")), 0o600)
	u2 := host.Base + "/second.json"
	if _, err := run(t, svc, "", "clients", "register-url", u2, "--pin", bad); err == nil || !strings.Contains(err.Error(), "client_id is not exactly") {
		t.Fatalf("bad pin: %v", err)
	}
	if _, err := s.GetClient(context.Background(), u2); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("a refused registration was stored")
	}
}

// A client first recorded under the open policy becomes registered.
func TestRegisterURLClientAdoptsOpenLinked(t *testing.T) {
	s := sqltest.SQLite(t)
	host := testkit.NewDocHost(t)
	u := host.Put("/open.json", http.StatusOK, urlDoc(host.Base+"/open.json", "Goose"))
	if err := s.CreateClient(context.Background(), store.Client{ID: u, Name: "Goose", Public: true, OpenLinked: true,
		AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"}, CreatedAt: fixedNow, UpdatedAt: fixedNow}); err != nil {
		t.Fatal(err)
	}
	svc := urlService(t, s, host)
	info, err := svc.RegisterURLClient(context.Background(), admin.Actor{ID: admin.ActorCLI}, admin.URLClientSpec{URL: u})
	if err != nil || info.OpenLinked || !info.URLClient {
		t.Fatalf("register: %+v, %v", info, err)
	}
	if c, _ := s.GetClient(context.Background(), u); c.OpenLinked || len(c.AllowedScopes) != len(admin.DefaultURLAllowed) {
		t.Fatalf("record %+v", c)
	}
}
