package adminui_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	consentui "github.com/linkslot/linkslot/consent-ui"
	adminui "github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// TestWithConsentUI mounts the admin pages and API next to the real consent
// UI, as the authorization server does: an administrator signs in on the
// consent UI's login page, registers a client on the admin pages with the
// consent UI's CSRF token, and reads it through the API with the same
// session; a signed-in person without the role gets 403 from both.
func TestWithConsentUI(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	svc, err := admin.New(admin.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	const pw = "admin password 123"
	if _, err := svc.CreateUser(ctx, admin.Actor{ID: admin.ActorCLI}, "boss@example.com", pw, true); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateUser(ctx, admin.Actor{ID: admin.ActorCLI}, "person@example.com", pw, false); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	key := []byte(strings.Repeat("k", 32))
	// The services need an issuer for their e-mails' links; the pages run
	// without one, as on a test server.
	services, err := app.NewAuthServices(config.Config{Issuer: "http://127.0.0.1:8080", SecretKey: key}, s, app.ServiceOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := consentui.New(consentui.Config{Store: s, SecretKey: key, Logger: log}.WithServices(services))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := adminui.New(svc, ui, log)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Mount(mux)
	mux.Handle("/admin", pages)
	mux.Handle("/admin/", pages)
	mux.Handle(adminapi.Prefix, adminapi.NewAPI(svc, adminapi.AnyOf{adminapi.NewTokenAuth(""), adminapi.NewSessionAuth(ui)}, log))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar}
	}
	page := func(c *http.Client, method, path string, form url.Values) (int, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if method == "GET" {
			resp, err = c.Get(srv.URL + path)
		} else {
			resp, err = c.PostForm(srv.URL+path, form)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	csrf := func(body string) string {
		t.Helper()
		m := csrfRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no CSRF token in page:\n%s", body)
		}
		return m[1]
	}
	signIn := func(email string) *http.Client {
		c := browser()
		// Visiting an admin page first lands on the login page.
		code, body := page(c, "GET", "/admin/clients", nil)
		if code != 200 || !strings.Contains(body, `name="password"`) {
			t.Fatalf("expected the login page, got %d", code)
		}
		code, body = page(c, "POST", "/login?next=%2Fadmin%2Fclients", url.Values{"csrf_token": {csrf(body)}, "email": {email}, "password": {pw}})
		if code == http.StatusUnauthorized || strings.Contains(body, `name="password"`) {
			t.Fatalf("sign in %s: %d", email, code)
		}
		return c
	}

	admin := signIn("boss@example.com")
	code, body := page(admin, "GET", "/admin/clients/new", nil)
	if code != 200 {
		t.Fatalf("new client page: %d", code)
	}
	code, body = page(admin, "POST", "/admin/clients", url.Values{"csrf_token": {csrf(body)}, "id": {"browser-app"},
		"name": {"Browser App"}, "type": {"public"}, "redirect_uris": {"http://127.0.0.1/callback"},
		"allowed_scopes": {"openid", "bookings:read"}, "grant_types": {"authorization_code", "refresh_token"}})
	if code != 200 || !strings.Contains(body, "Client registered") {
		t.Fatalf("register: %d\n%s", code, body)
	}
	resp, err := admin.Get(srv.URL + "/admin/api/clients/browser-app")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("API with the admin session: %d", resp.StatusCode)
	}
	// A stale token (from another session) is refused.
	if code, _ := page(admin, "POST", "/admin/clients/browser-app/disable", url.Values{"csrf_token": {"forged"}}); code != http.StatusForbidden {
		t.Errorf("forged CSRF: %d", code)
	}

	person := signIn("person@example.com")
	if code, _ := page(person, "GET", "/admin/clients", nil); code != http.StatusForbidden {
		t.Errorf("person on admin pages: %d", code)
	}
	resp, err = person.Get(srv.URL + "/admin/api/clients")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("person on the API: %d", resp.StatusCode)
	}
	evs, _ := s.ListAuditEvents(ctx, 10, 0)
	if evs[0].Action != "client.create" || !strings.HasPrefix(evs[0].ActorID, "acct_") {
		t.Errorf("audit = %+v", evs[0])
	}
}
