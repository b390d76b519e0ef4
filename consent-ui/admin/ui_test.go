package adminui_test

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

const csrfOK = "csrf-ok"

// chrome is a small consent.UI for the tests: the "session" cookie names an
// account in the real store; the CSRF token is fixed.
type chrome struct{ s store.Store }

var _ consent.UI = chrome{}

func (c chrome) CurrentAccount(r *http.Request) (store.Account, bool) {
	ck, err := r.Cookie("session")
	if err != nil {
		return store.Account{}, false
	}
	a, err := c.s.GetAccount(r.Context(), ck.Value)
	return a, err == nil
}

func (chrome) LoginRedirect(w http.ResponseWriter, r *http.Request, next string) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
}

func (chrome) CSRFToken(w http.ResponseWriter, r *http.Request) string { return csrfOK }
func (chrome) VerifyCSRF(r *http.Request) bool                         { return r.PostFormValue(consent.CSRFField) == csrfOK }
func (chrome) RenderConsent(w http.ResponseWriter, r *http.Request, v consent.ConsentView) {
}

func (chrome) RenderError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<h1>%s</h1><p>%s</p>", title, message)
}

type env struct {
	t   *testing.T
	s   store.Store
	svc *admin.Service
	srv *httptest.Server
}

func newEnv(t *testing.T, s store.Store) *env {
	svc, err := admin.New(admin.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	h, err := adminui.New(svc, chrome{s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin", h)
	mux.Handle("/admin/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	now := time.Now().UTC()
	for _, a := range []store.Account{
		{ID: "acct_admin", Email: "admin@example.com", PasswordHash: "x", Admin: true, CreatedAt: now, UpdatedAt: now},
		{ID: "acct_person", Email: "person@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now},
	} {
		if err := s.CreateAccount(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, s: s, svc: svc, srv: srv}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (e *env) get(session, path string) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	return e.send(req, session)
}

func (e *env) post(session, path string, form url.Values) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.send(req, session)
}

func (e *env) send(req *http.Request, session string) (*http.Response, string) {
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "session", Value: session})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// upload posts a catalog file to the catalog page as the form's file.
func (e *env) upload(session, name string, file []byte) (*http.Response, string) {
	e.t.Helper()
	var buf strings.Builder
	mw := multipart.NewWriter(&buf)
	mw.WriteField(consent.CSRFField, csrfOK)
	mw.WriteField("format", "yaml")
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(file)
	mw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+"/admin/catalog", strings.NewReader(buf.String()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return e.send(req, session)
}

func form(kv ...string) url.Values {
	v := url.Values{consent.CSRFField: {csrfOK}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func TestAccess(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	for _, path := range []string{"/admin", "/admin/clients", "/admin/clients/new", "/admin/businesses", "/admin/audit", "/admin/nope"} {
		resp, _ := e.get("", path)
		if path != "/admin" && (resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=")) {
			t.Errorf("anonymous %s: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
		if path == "/admin" {
			continue
		}
		resp, _ = e.get("acct_person", path)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("non-admin %s: %d", path, resp.StatusCode)
		}
	}
	resp, _ := e.post("acct_person", "/admin/clients", form("id", "x", "name", "X", "type", "public", "redirect_uris", "https://x.example/cb"))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("non-admin POST: %d", resp.StatusCode)
	}
	resp, _ = e.post("", "/admin/clients", form("id", "x"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fadmin" {
		t.Errorf("anonymous POST: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Missing CSRF token.
	f := form("id", "x", "name", "X", "type", "public", "redirect_uris", "https://x.example/cb")
	f.Del(consent.CSRFField)
	if resp, _ = e.post("acct_admin", "/admin/clients", f); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST without CSRF: %d", resp.StatusCode)
	}
	if cs, _ := e.s.ListClients(context.Background()); len(cs) != 0 {
		t.Errorf("refused POSTs created %d clients", len(cs))
	}
	// Headers on an admin page.
	resp, body := e.get("acct_admin", "/admin/clients")
	if resp.StatusCode != 200 || !strings.Contains(body, "Register a client") {
		t.Fatalf("admin list: %d", resp.StatusCode)
	}
	h := resp.Header
	if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" ||
		h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers: %v", h)
	}
	if resp, _ := e.get("", "/admin/static/admin.css"); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

var secretRE = regexp.MustCompile(`<code class="secret-value">([A-Za-z0-9_-]+)</code>`)

func TestPages(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		const adm = "acct_admin"

		// Register a public client.
		resp, body := e.post(adm, "/admin/clients", form("id", "web-agent", "name", "Web Agent", "type", "public",
			"redirect_uris", "http://127.0.0.1/callback\r\nhttps://agent.example/cb",
			"allowed_scopes", "openid", "allowed_scopes", "bookings:read", "default_scopes", "bookings:read",
			"grant_types", "authorization_code", "grant_types", "refresh_token"))
		if resp.StatusCode != 200 || !strings.Contains(body, "Client registered") || strings.Contains(body, "secret-value") {
			t.Fatalf("create public: %d\n%s", resp.StatusCode, body)
		}
		c, err := s.GetClient(ctx, "web-agent")
		if err != nil || !c.Public || len(c.RedirectURIs) != 2 || len(c.AllowedScopes) != 2 {
			t.Fatalf("stored = %+v %v", c, err)
		}

		// Refused: bad redirect, unknown scope, duplicate id; the form comes back with the problems.
		for _, tc := range []struct {
			name string
			f    url.Values
			want string
		}{
			{"bad redirect", form("id", "x", "name", "X", "type", "public", "redirect_uris", "http://evil.example/cb"), "redirect_uris"},
			{"unknown scope", form("id", "x", "name", "X", "type", "public", "redirect_uris", "https://x.example/cb", "allowed_scopes", "superuser"), "superuser"},
			{"duplicate id", form("id", "web-agent", "name", "X", "type", "public", "redirect_uris", "https://x.example/cb", "allowed_scopes", "openid"), "already registered"},
		} {
			resp, body := e.post(adm, "/admin/clients", tc.f)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Nothing was changed") || !strings.Contains(body, tc.want) {
				t.Errorf("%s: %d\n%s", tc.name, resp.StatusCode, body)
			}
		}
		if _, err := s.GetClient(ctx, "x"); err == nil {
			t.Errorf("refused client stored")
		}

		// Confidential client: the secret is shown once.
		resp, body = e.post(adm, "/admin/clients", form("id", "srv", "name", "Server", "type", "confidential",
			"redirect_uris", "https://srv.example/cb", "allowed_scopes", "openid", "grant_types", "authorization_code",
			"id_token_signed_response_alg", "RS256"))
		m := secretRE.FindStringSubmatch(body)
		if resp.StatusCode != 200 || m == nil {
			t.Fatalf("create confidential: %d\n%s", resp.StatusCode, body)
		}
		secret := m[1]
		if c, _ := s.GetClient(ctx, "srv"); !clients.CompareSecret(c.SecretHash, secret) {
			t.Errorf("shown secret does not match the stored hash")
		}
		if _, body := e.get(adm, "/admin/clients/srv"); strings.Contains(body, secret) || !strings.Contains(body, "Rotate secret") {
			t.Errorf("client page shows the secret or lacks rotate")
		}
		// Its ID tokens are RS256, as the form chose, and the form shows it.
		if c, _ := s.GetClient(ctx, "srv"); c.IDTokenSignedResponseAlg != "RS256" {
			t.Errorf("stored ID token algorithm %q, want RS256", c.IDTokenSignedResponseAlg)
		}
		if _, body := e.get(adm, "/admin/clients/srv"); !strings.Contains(body, `<option value="RS256" selected>`) {
			t.Errorf("the client form does not show RS256 chosen")
		}
		resp, body = e.post(adm, "/admin/clients/srv", form("name", "Server", "redirect_uris", "https://srv.example/cb",
			"allowed_scopes", "openid", "grant_types", "authorization_code", "id_token_signed_response_alg", "HS256"))
		if c, _ := s.GetClient(ctx, "srv"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not supported (ES256 or RS256)") ||
			c.IDTokenSignedResponseAlg != "RS256" {
			t.Errorf("an unsupported ID token algorithm: %d, stored %q", resp.StatusCode, c.IDTokenSignedResponseAlg)
		}

		// Edit, disable, enable, rotate, delete.
		resp, _ = e.post(adm, "/admin/clients/web-agent", form("name", "Web Agent 2", "redirect_uris", "http://127.0.0.1/callback",
			"allowed_scopes", "openid", "allowed_scopes", "bookings:write", "grant_types", "authorization_code"))
		if c, _ := s.GetClient(ctx, "web-agent"); resp.StatusCode != http.StatusSeeOther || c.Name != "Web Agent 2" || len(c.RedirectURIs) != 1 {
			t.Errorf("edit: %d %+v", resp.StatusCode, c)
		}
		resp, body = e.post(adm, "/admin/clients/web-agent", form("name", "Web Agent 2", "redirect_uris", "https://x.example/cb#frag", "grant_types", "authorization_code"))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "fragment") {
			t.Errorf("bad edit: %d", resp.StatusCode)
		}
		resp, _ = e.post(adm, "/admin/clients/web-agent/disable", form())
		if c, _ := s.GetClient(ctx, "web-agent"); resp.StatusCode != http.StatusSeeOther || !c.Disabled {
			t.Errorf("disable: %d %v", resp.StatusCode, c.Disabled)
		}
		if _, body := e.get(adm, resp.Header.Get("Location")); !strings.Contains(body, "The client is disabled") || !strings.Contains(body, "Enable client") {
			t.Errorf("after disable the page should say so")
		}
		e.post(adm, "/admin/clients/web-agent/enable", form())
		if c, _ := s.GetClient(ctx, "web-agent"); c.Disabled {
			t.Errorf("enable failed")
		}
		_, body = e.post(adm, "/admin/clients/srv/rotate-secret", form())
		m = secretRE.FindStringSubmatch(body)
		if m == nil || m[1] == secret {
			t.Fatalf("rotate:\n%s", body)
		}
		secret2 := m[1]
		if resp, _ := e.post(adm, "/admin/clients/web-agent/rotate-secret", form()); resp.StatusCode != http.StatusConflict {
			t.Errorf("rotate public: %d", resp.StatusCode)
		}
		if resp, _ := e.post(adm, "/admin/clients/srv/delete", form()); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("delete without confirm: %d", resp.StatusCode)
		}
		resp, _ = e.post(adm, "/admin/clients/srv/delete", form("confirm", "yes"))
		if _, err := s.GetClient(ctx, "srv"); resp.StatusCode != http.StatusSeeOther || err == nil {
			t.Errorf("delete: %d %v", resp.StatusCode, err)
		}
		if resp, _ := e.get(adm, "/admin/clients/srv"); resp.StatusCode != 404 {
			t.Errorf("deleted client page: %d", resp.StatusCode)
		}

		// Businesses and the agent-booking switch.
		if _, err := e.svc.ImportCatalog(ctx, admin.Actor{ID: "cli"}, []byte(
			"businesses:\n  - {reference: barber, name: Barber, category: appointment, timezone: Europe/Rome, currency: EUR, agent_booking: true}\n"), "yaml"); err != nil {
			t.Fatal(err)
		}
		if _, body := e.get(adm, "/admin/businesses"); !strings.Contains(body, "Turn agent booking off for Barber") {
			t.Errorf("businesses page:\n%s", body)
		}
		resp, _ = e.post(adm, "/admin/businesses/barber/agent-booking", form("enabled", "off"))
		if b, _ := s.GetBusiness(ctx, "barber"); resp.StatusCode != http.StatusSeeOther || b.AgentBooking {
			t.Errorf("agent booking off: %d %v", resp.StatusCode, b.AgentBooking)
		}
		if resp, _ := e.post(adm, "/admin/businesses/nope/agent-booking", form("enabled", "on")); resp.StatusCode != 404 {
			t.Errorf("unknown business: %d", resp.StatusCode)
		}

		// Members: an owner added and removed; an unknown address is
		// refused on the form, an unknown business is not found.
		if err := s.CreateAccount(ctx, store.Account{ID: "acct_owner", Email: "owner@example.com", PasswordHash: "x", CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if resp, body := e.post(adm, "/admin/businesses/barber/members", form("email", "nobody@example.com")); resp.StatusCode != http.StatusBadRequest ||
			!strings.Contains(body, "no account with e-mail") {
			t.Errorf("unknown address: %d", resp.StatusCode)
		}
		if resp, _ := e.post(adm, "/admin/businesses/barber/members", form("email", "owner@example.com")); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("add owner: %d", resp.StatusCode)
		}
		if _, body := e.get(adm, "/admin/businesses/barber/members"); !strings.Contains(body, "owner@example.com") || !strings.Contains(body, "owner") {
			t.Errorf("members page:\n%s", body)
		}
		if resp, _ := e.get(adm, "/admin/businesses/nope/members"); resp.StatusCode != 404 {
			t.Errorf("members of an unknown business: %d", resp.StatusCode)
		}
		if resp, _ := e.post(adm, "/admin/businesses/barber/members/remove", form("email", "owner@example.com")); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("remove owner: %d", resp.StatusCode)
		}
		if b, _ := s.GetBusiness(ctx, "barber"); func() bool { ms, _ := s.ListBusinessMembers(ctx, b.ID); return len(ms) != 0 }() {
			t.Errorf("the removed owner is still a member")
		}

		// Audit page: every action by the admin, no secrets.
		_, body = e.get(adm, "/admin/audit")
		for _, a := range []string{"client.create", "client.update", "client.disable", "client.enable", "client.rotate_secret", "client.delete", "business.agent_booking", "business.member.add", "business.member.remove"} {
			if !strings.Contains(body, a) {
				t.Errorf("audit page lacks %s", a)
			}
		}
		if strings.Contains(body, secret) || strings.Contains(body, secret2) || strings.Contains(body, "hs256$") {
			t.Errorf("audit page shows a secret")
		}
		evs, _ := s.ListAuditEvents(ctx, 100, 0)
		for _, ev := range evs {
			if ev.Action != "catalog.import" && ev.ActorID != "acct_admin" {
				t.Errorf("event %s by %q", ev.Action, ev.ActorID)
			}
		}
	})
}

func TestCatalogPage(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	e := newEnv(t, s)
	const adm = "acct_admin"
	if resp, body := e.get(adm, "/admin/catalog"); resp.StatusCode != 200 || !strings.Contains(body, "Check and import") {
		t.Fatalf("catalog page: %d", resp.StatusCode)
	}
	half := "businesses:\n  - {reference: ok, name: OK, category: appointment, timezone: UTC, currency: EUR}\n" +
		"  - {reference: bad, name: Bad, category: appointment, timezone: Atlantis/Main, currency: EUR, hours: {monday: ['09:00-25:00']}}\n"
	resp, body := e.post(adm, "/admin/catalog", form("format", "yaml", "content", half))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "businesses[1].timezone") ||
		!strings.Contains(body, "businesses[1].hours.monday[0]") || !strings.Contains(body, "Atlantis/Main") {
		t.Errorf("half-valid: %d\n%s", resp.StatusCode, body)
	}
	if bs, _ := s.ListBusinesses(ctx); len(bs) != 0 {
		t.Errorf("half-valid file wrote %d businesses", len(bs))
	}

	// More businesses than one import takes: 413 naming the limit, nothing written.
	resp, body = e.upload(adm, "catalog.json", testkit.CatalogFile(10001))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "one import takes at most 10000") {
		t.Errorf("over the limit: %d\n%.2000s", resp.StatusCode, body)
	}
	if bs, _ := s.ListBusinesses(ctx); len(bs) != 0 {
		t.Errorf("a file over the limit wrote %d businesses", len(bs))
	}

	// A JSON file upload.
	resp, body = e.upload(adm, "catalog.json", []byte(`{"businesses":[{"reference":"deli","name":"Deli","category":"restaurant","timezone":"Europe/Oslo","currency":"NOK"}]}`))
	if resp.StatusCode != 200 || !strings.Contains(body, "Imported 1 business(es): deli") {
		t.Fatalf("upload: %d\n%s", resp.StatusCode, body)
	}
	resp, body = e.get(adm, "/admin/catalog/export?format=json")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(body, `"reference": "deli"`) {
		t.Errorf("export: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.get("acct_person", "/admin/catalog/export"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("non-admin export: %d", resp.StatusCode)
	}
}

// The clients page registers an app by its client ID URL (here from a
// pinned copy), shows the refusal of a bad one in place, and the client's
// page opens by its escaped URL.
func TestRegisterURLPage(t *testing.T) {
	s := sqltest.SQLite(t)
	e := newEnv(t, s)
	const adm = "acct_admin"
	const u = "https://claude.ai/oauth/mcp-oauth-client-metadata"
	if _, body := e.get(adm, "/admin/clients"); !strings.Contains(body, `action="/admin/clients/register-url"`) {
		t.Fatalf("no register-url form:\n%s", body)
	}
	pin := `{"client_id":"` + u + `","client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]}`
	resp, body := e.post(adm, "/admin/clients/register-url", form("client_id_url", u, "default_scopes", "bookings:read", "pinned_document", pin))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("register: %d\n%s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	if loc != "/admin/clients/"+url.PathEscape(u)+"?done=registered" {
		t.Fatalf("Location %q", loc)
	}
	if resp, body := e.get(adm, loc); resp.StatusCode != 200 || !strings.Contains(body, "Claude") || !strings.Contains(body, "registered by its client ID URL") {
		t.Fatalf("client page: %d\n%s", resp.StatusCode, body)
	}
	if _, body := e.get(adm, "/admin/clients"); !strings.Contains(body, "by URL (pinned)") {
		t.Fatalf("list does not mark the URL client:\n%s", body)
	}
	resp, body = e.post(adm, "/admin/clients/register-url", form("client_id_url", "http://agent.example/c.json"))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "must start with https://") {
		t.Fatalf("bad URL: %d\n%s", resp.StatusCode, body)
	}
}
