package adminapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const adminToken = "test-admin-token-0123456789"

// sessions stands in for the consent UI's session lookup: the "session"
// cookie names an account id in the store.
type sessions struct{ s store.Store }

func (ss sessions) CurrentAccount(r *http.Request) (store.Account, bool) {
	c, err := r.Cookie("session")
	if err != nil {
		return store.Account{}, false
	}
	a, err := ss.s.GetAccount(r.Context(), c.Value)
	return a, err == nil
}

type env struct {
	t   *testing.T
	s   store.Store
	srv *httptest.Server
}

func clock() store.Clock {
	var mu sync.Mutex
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func newEnv(t *testing.T, s store.Store, auth adminapi.Authenticator) *env {
	return newEnvWith(t, s, auth, nil)
}

// newEnvWith is newEnv with the service's configuration adjusted by mod.
func newEnvWith(t *testing.T, s store.Store, auth adminapi.Authenticator, mod func(*admin.Config)) *env {
	cfg := admin.Config{Store: s, Clock: clock()}
	if mod != nil {
		mod(&cfg)
	}
	svc, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(adminapi.Prefix, adminapi.NewAPI(svc, auth, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, s: s, srv: srv}
}

type reqOpt func(*http.Request)

func withToken(tok string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func withSession(id string) reqOpt {
	return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "session", Value: id}) }
}

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

// do sends a request and decodes a JSON answer into a map (or returns the
// raw body for other types).
func (e *env) do(method, path, ctype, body string, opts ...reqOpt) (int, map[string]any, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		e.t.Errorf("%s %s: Cache-Control %q", method, path, cc)
	}
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &m); err != nil {
			e.t.Fatalf("%s %s: bad JSON %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, m, string(raw)
}

// tokenAudit reads the audit log, oldest first, as "action" or "action
// target" lines, checking that every event is the admin token's with a
// request id; raw is the answer, to look for leaked secrets.
func (e *env) tokenAudit(tok reqOpt, withTarget bool) (actions []string, raw string) {
	e.t.Helper()
	code, m, raw := e.do("GET", "/admin/api/audit?limit=200", "", "", tok)
	if code != 200 {
		e.t.Fatalf("audit: %d", code)
	}
	for _, ev := range m["events"].([]any) {
		em := ev.(map[string]any)
		a := em["action"].(string)
		if withTarget {
			a += " " + em["target"].(string)
		}
		actions = append([]string{a}, actions...)
		if em["actor"] != adminapi.ActorToken || em["request_id"] == "" {
			e.t.Errorf("event %v", em)
		}
	}
	return actions, raw
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func problemPaths(m map[string]any) []string {
	e, _ := m["error"].(map[string]any)
	ps, _ := e["problems"].([]any)
	var out []string
	for _, p := range ps {
		pm := p.(map[string]any)
		out = append(out, pm["path"].(string)+": "+pm["message"].(string))
	}
	return out
}

func TestNeverOpen(t *testing.T) {
	s := sqltest.SQLite(t)
	routes := [][2]string{{"GET", "/admin/api/clients"}, {"POST", "/admin/api/clients"}, {"GET", "/admin/api/clients/x"},
		{"PATCH", "/admin/api/clients/x"}, {"DELETE", "/admin/api/clients/x"}, {"POST", "/admin/api/clients/x/disable"},
		{"POST", "/admin/api/clients/x/enable"}, {"POST", "/admin/api/clients/x/rotate-secret"}, {"POST", "/admin/api/users"},
		{"POST", "/admin/api/users/a@example.com/admin"}, {"POST", "/admin/api/catalog"}, {"GET", "/admin/api/catalog"},
		{"POST", "/admin/api/businesses/b/agent-booking"}, {"GET", "/admin/api/audit"}, {"GET", "/admin/api/nope"},
		{"GET", "/admin/api/webhooks"}, {"POST", "/admin/api/webhooks"}, {"GET", "/admin/api/webhooks/x"}, {"PATCH", "/admin/api/webhooks/x"},
		{"DELETE", "/admin/api/webhooks/x"}, {"POST", "/admin/api/webhooks/x/disable"}, {"POST", "/admin/api/webhooks/x/enable"},
		{"POST", "/admin/api/webhooks/x/rotate-secret"}, {"GET", "/admin/api/webhooks/x/deliveries"},
		{"GET", "/admin/api/webhooks/deliveries"}, {"POST", "/admin/api/webhooks/deliveries/x/replay"}}
	for _, tc := range []struct {
		name string
		auth adminapi.Authenticator
		opts []reqOpt
	}{
		{"no authenticator", nil, []reqOpt{withToken(adminToken)}},
		{"token auth off", adminapi.NewTokenAuth(""), []reqOpt{withToken("")}},
		{"short token is off", adminapi.NewTokenAuth("short"), []reqOpt{withToken("short")}},
		{"wrong token", adminapi.NewTokenAuth(adminToken), []reqOpt{withToken(adminToken + "x")}},
		{"no credentials", adminapi.AnyOf{adminapi.NewTokenAuth(adminToken), adminapi.NewSessionAuth(sessions{s})}, nil},
		{"basic scheme", adminapi.NewTokenAuth(adminToken), []reqOpt{withHeader("Authorization", "Basic "+adminToken)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, s, tc.auth)
			for _, rt := range routes {
				code, m, _ := e.do(rt[0], rt[1], "application/json", "{}", tc.opts...)
				if code != http.StatusUnauthorized || errCode(m) != "unauthorized" {
					t.Errorf("%s %s: %d %v", rt[0], rt[1], code, m)
				}
			}
		})
	}
	if evs, _ := s.ListAuditEvents(context.Background(), 10, 0); len(evs) != 0 {
		t.Errorf("unauthenticated requests changed something: %+v", evs)
	}
}

func TestSessionAuth(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	now := time.Now().UTC()
	for _, a := range []store.Account{
		{ID: "acct_admin", Email: "admin@example.com", PasswordHash: "x", Admin: true, CreatedAt: now, UpdatedAt: now},
		{ID: "acct_person", Email: "person@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now},
	} {
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, s, adminapi.AnyOf{adminapi.NewTokenAuth(""), adminapi.NewSessionAuth(sessions{s})})
	if code, m, _ := e.do("GET", "/admin/api/clients", "", "", withSession("acct_person")); code != 403 || errCode(m) != "forbidden" {
		t.Errorf("non-admin: %d %v", code, m)
	}
	body := `{"id":"c1","name":"C1","public":true,"redirect_uris":["https://c1.example/cb"],"allowed_scopes":["openid"]}`
	if code, _, _ := e.do("POST", "/admin/api/clients", "application/json", body, withSession("acct_person")); code != 403 {
		t.Errorf("non-admin create: %d", code)
	}
	// A cross-site page cannot use an administrator's cookie to change things.
	if code, _, _ := e.do("POST", "/admin/api/clients", "application/json", body, withSession("acct_admin"),
		withHeader("Sec-Fetch-Site", "cross-site")); code == http.StatusCreated {
		t.Errorf("cross-site POST with the admin cookie was accepted")
	}
	if code, m, _ := e.do("POST", "/admin/api/clients", "application/json", body, withSession("acct_admin"),
		withHeader("Sec-Fetch-Site", "same-origin")); code != http.StatusCreated {
		t.Fatalf("admin session create: %d %v", code, m)
	}
	evs, _ := s.ListAuditEvents(ctx, 10, 0)
	if len(evs) != 1 || evs[0].ActorID != "acct_admin" || evs[0].Action != "client.create" || evs[0].RequestID == "" {
		t.Errorf("audit = %+v", evs)
	}
}

func TestAPIOperations(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		e := newEnv(t, s, adminapi.NewTokenAuth(adminToken))
		tok := withToken(adminToken)

		// Create a public and a confidential client.
		code, m, raw := e.do("POST", "/admin/api/clients", "application/json",
			`{"id":"pub","name":"Public Agent","public":true,"redirect_uris":["http://127.0.0.1/callback"],
			  "allowed_scopes":["openid","bookings:read","bookings:write"],"default_scopes":["bookings:read"]}`, tok)
		if code != http.StatusCreated || strings.Contains(raw, "client_secret") {
			t.Fatalf("create public: %d %s", code, raw)
		}
		code, m, raw = e.do("POST", "/admin/api/clients", "application/json",
			`{"id":"conf","name":"Server App","redirect_uris":["https://app.example/cb"],"allowed_scopes":["openid"],"logo_url":"https://app.example/logo.png",
			  "id_token_signed_response_alg":"RS256"}`, tok)
		secret, _ := m["client_secret"].(string)
		if cm, _ := m["client"].(map[string]any); code != http.StatusCreated || secret == "" || cm["id_token_signed_response_alg"] != "RS256" {
			t.Fatalf("create confidential: %d %s", code, raw)
		}
		if c, _ := s.GetClient(ctx, "conf"); c.IDTokenSignedResponseAlg != "RS256" {
			t.Errorf("stored ID token algorithm %q, want RS256", c.IDTokenSignedResponseAlg)
		}
		// "" returns a client to the server's default; ES256 chooses it.
		for _, alg := range []string{"ES256", "", "RS256"} {
			code, _, raw := e.do("PATCH", "/admin/api/clients/conf", "application/json", `{"id_token_signed_response_alg":"`+alg+`"}`, tok)
			if c, _ := s.GetClient(ctx, "conf"); code != 200 || c.IDTokenSignedResponseAlg != alg {
				t.Errorf("patch ID token algorithm %q: %d %s, stored %q", alg, code, raw, c.IDTokenSignedResponseAlg)
			}
		}
		if c, _ := s.GetClient(ctx, "conf"); !clients.CompareSecret(c.SecretHash, secret) {
			t.Errorf("stored hash does not match the shown secret")
		}

		// Refused inputs.
		for _, tc := range []struct {
			name, method, path, ctype, body string
			status                          int
			code, want                      string
		}{
			{"bad redirect", "POST", "/admin/api/clients", "application/json", `{"id":"x","name":"X","public":true,"redirect_uris":["http://evil.example/cb"]}`, 400, "invalid_request", "redirect_uris: "},
			{"wildcard redirect", "POST", "/admin/api/clients", "application/json", `{"id":"x","name":"X","public":true,"redirect_uris":["https://*.example/cb"]}`, 400, "invalid_request", "wildcard"},
			{"unknown scope", "POST", "/admin/api/clients", "application/json", `{"id":"x","name":"X","public":true,"redirect_uris":["https://x.example/cb"],"allowed_scopes":["openid","root"]}`, 400, "invalid_request", "allowed_scopes: unknown scope \"root\""},
			{"duplicate id", "POST", "/admin/api/clients", "application/json", `{"id":"pub","name":"Again","public":true,"redirect_uris":["https://x.example/cb"],"allowed_scopes":["openid"]}`, 409, "already_exists", ""},
			{"unknown field", "POST", "/admin/api/clients", "application/json", `{"id":"x","nmae":"X"}`, 400, "invalid_json", ""},
			{"wrong type", "POST", "/admin/api/clients", "text/plain", `{}`, 415, "unsupported_media_type", ""},
			{"switch public", "PATCH", "/admin/api/clients/pub", "application/json", `{"public":false}`, 400, "invalid_request", "public: "},
			{"patch unknown scope", "PATCH", "/admin/api/clients/pub", "application/json", `{"allowed_scopes":["everything"]}`, 400, "invalid_request", "everything"},
			{"unsupported ID token algorithm", "POST", "/admin/api/clients", "application/json", `{"id":"x","name":"X","public":true,"redirect_uris":["https://x.example/cb"],"allowed_scopes":["openid"],"id_token_signed_response_alg":"HS256"}`, 400, "invalid_request", "id_token_signed_response_alg: "},
			{"patch unsupported ID token algorithm", "PATCH", "/admin/api/clients/pub", "application/json", `{"id_token_signed_response_alg":"none"}`, 400, "invalid_request", "id_token_signed_response_alg: "},
			{"missing client", "GET", "/admin/api/clients/nope", "", "", 404, "not_found", ""},
			{"rotate public", "POST", "/admin/api/clients/pub/rotate-secret", "", "", 409, "conflict", ""},
			{"weak password", "POST", "/admin/api/users", "application/json", `{"email":"u@example.com","password":"short"}`, 400, "invalid_request", "password: "},
			{"set admin missing", "POST", "/admin/api/users/ghost@example.com/admin", "application/json", `{"admin":true}`, 404, "not_found", ""},
			{"agent booking missing field", "POST", "/admin/api/businesses/x/agent-booking", "application/json", `{}`, 400, "invalid_request", "enabled: "},
			{"bad audit limit", "GET", "/admin/api/audit?limit=0", "", "", 400, "invalid_request", "limit: "},
			{"bad export format", "GET", "/admin/api/catalog?format=xml", "", "", 400, "invalid_request", ""},
			{"wrong method", "PUT", "/admin/api/clients", "", "", 405, "method_not_allowed", ""},
			{"unknown route", "GET", "/admin/api/secrets", "", "", 404, "not_found", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, m, raw := e.do(tc.method, tc.path, tc.ctype, tc.body, tok)
				if code != tc.status || errCode(m) != tc.code || !strings.Contains(strings.Join(problemPaths(m), "\n"), tc.want) {
					t.Errorf("%d %s", code, raw)
				}
			})
		}
		if _, err := s.GetClient(ctx, "x"); err == nil {
			t.Errorf("a refused client was stored")
		}

		// Show, update, disable, enable, rotate, delete.
		code, _, raw = e.do("GET", "/admin/api/clients/conf", "", "", tok)
		if code != 200 || strings.Contains(raw, secret) || strings.Contains(raw, "hs256$") {
			t.Errorf("show: %d %s", code, raw)
		}
		code, m, _ = e.do("PATCH", "/admin/api/clients/pub", "application/json", `{"name":"Renamed","redirect_uris":["http://127.0.0.1/callback","https://agent.example/cb"]}`, tok)
		if c, _ := s.GetClient(ctx, "pub"); code != 200 || c.Name != "Renamed" || len(c.RedirectURIs) != 2 || len(c.AllowedScopes) != 3 {
			t.Errorf("patch: %d %+v", code, c)
		}
		e.do("POST", "/admin/api/clients/pub/disable", "", "", tok)
		if c, _ := s.GetClient(ctx, "pub"); !c.Disabled {
			t.Errorf("not disabled")
		}
		code, m, _ = e.do("POST", "/admin/api/clients/pub/enable", "", "", tok)
		if c, _ := s.GetClient(ctx, "pub"); code != 200 || c.Disabled {
			t.Errorf("not enabled")
		}
		_, m, _ = e.do("POST", "/admin/api/clients/conf/rotate-secret", "", "", tok)
		secret2, _ := m["client_secret"].(string)
		if c, _ := s.GetClient(ctx, "conf"); secret2 == "" || !clients.CompareSecret(c.SecretHash, secret2) || clients.CompareSecret(c.SecretHash, secret) {
			t.Errorf("rotate: %v", m)
		}
		code, m, _ = e.do("GET", "/admin/api/clients", "", "", tok)
		if l, _ := m["clients"].([]any); code != 200 || len(l) != 2 {
			t.Errorf("list: %d %v", code, m)
		}
		if code, _, _ := e.do("DELETE", "/admin/api/clients/conf", "", "", tok); code != http.StatusNoContent {
			t.Errorf("delete: %d", code)
		}
		if code, _, _ := e.do("DELETE", "/admin/api/clients/conf", "", "", tok); code != 404 {
			t.Errorf("second delete: %d", code)
		}

		// Users.
		const pw = "a long enough password"
		code, m, raw = e.do("POST", "/admin/api/users", "application/json", `{"email":"staff@example.com","password":"`+pw+`"}`, tok)
		if code != 201 || strings.Contains(raw, pw) || strings.Contains(raw, "argon") {
			t.Errorf("create user: %d %s", code, raw)
		}
		if code, _, _ := e.do("POST", "/admin/api/users", "application/json", `{"email":"staff@example.com","password":"`+pw+`"}`, tok); code != 409 {
			t.Errorf("duplicate user: %d", code)
		}
		code, m, _ = e.do("POST", "/admin/api/users/staff@example.com/admin", "application/json", `{"admin":true}`, tok)
		if a, _ := s.GetAccountByEmail(ctx, "staff@example.com"); code != 200 || !a.Admin {
			t.Errorf("set admin: %d %v", code, m)
		}

		// Catalog: a half-valid file changes nothing and lists every problem.
		half := `{"businesses":[
		  {"reference":"ok","name":"OK","category":"appointment","timezone":"Europe/Paris","currency":"EUR"},
		  {"reference":"ok","name":"Dup","category":"salon","timezone":"Nowhere/Land","currency":"EUR",
		   "services":[{"reference":"s","name":"S","duration_minutes":-5}],
		   "staff":[{"reference":"p","name":"P","services":["s","t"],"hours":{"monday":["09:00-17:00","16:00-18:00"]}}]}]}`
		code, m, raw = e.do("POST", "/admin/api/catalog", "application/json", half, tok)
		got := strings.Join(problemPaths(m), "\n")
		if code != 400 || errCode(m) != "invalid_catalog" {
			t.Fatalf("half-valid: %d %s", code, raw)
		}
		for _, w := range []string{"businesses[1].reference: ", "businesses[1].category: ", "businesses[1].timezone: ",
			"businesses[1].services[0].duration_minutes: ", "businesses[1].staff[0].services[1]: ", "businesses[1].staff[0].hours.monday[1]: "} {
			if !strings.Contains(got, w) {
				t.Errorf("missing problem %q in\n%s", w, got)
			}
		}
		if n := len(problemPaths(m)); n != 6 {
			t.Errorf("%d problems:\n%s", n, got)
		}
		if bs, _ := s.ListBusinesses(ctx); len(bs) != 0 {
			t.Errorf("half-valid file wrote %d businesses", len(bs))
		}
		// Catalog text at the door (docs/reference.md §4): a NUL in a name
		// and a name of 100,000 characters are refused, each field named.
		hostile := `{"businesses":[{"reference":"nul","name":"Bistro\u0000","category":"appointment","timezone":"UTC","currency":"EUR"},
		  {"reference":"long","name":"` + strings.Repeat("B", 100000) + `","category":"appointment","timezone":"UTC","currency":"EUR"}]}`
		code, m, raw = e.do("POST", "/admin/api/catalog", "application/json", hostile, tok)
		got = strings.Join(problemPaths(m), "\n")
		if code != 400 || !strings.Contains(got, "businesses[0].name: ") || !strings.Contains(got, "businesses[1].name: ") {
			t.Errorf("hostile names: %d %s", code, got)
		}
		if bs, _ := s.ListBusinesses(ctx); len(bs) != 0 {
			t.Errorf("a refused file wrote %d businesses", len(bs))
		}
		good := "businesses:\n  - {reference: cafe, name: Cafe, category: restaurant, timezone: Asia/Tokyo, currency: JPY, agent_booking: true}\n"
		code, m, raw = e.do("POST", "/admin/api/catalog", "application/yaml", good, tok)
		if code != 200 || !strings.Contains(raw, `"cafe"`) || m["warnings"] == nil {
			t.Fatalf("import: %d %s (want the imported references and a warnings list)", code, raw)
		}
		code, _, raw = e.do("GET", "/admin/api/catalog?format=yaml", "", "", tok)
		if code != 200 || !strings.Contains(raw, "reference: cafe") {
			t.Errorf("export yaml: %d %s", code, raw)
		}
		code, m, _ = e.do("GET", "/admin/api/catalog", "", "", tok)
		if code != 200 || m["businesses"] == nil {
			t.Errorf("export json: %d %v", code, m)
		}
		code, m, _ = e.do("POST", "/admin/api/businesses/cafe/agent-booking", "application/json", `{"enabled":false}`, tok)
		if b, _ := s.GetBusiness(ctx, "cafe"); code != 200 || b.AgentBooking {
			t.Errorf("agent booking off: %d %v", code, m)
		}
		if code, _, _ := e.do("POST", "/admin/api/businesses/nope/agent-booking", "application/json", `{"enabled":true}`, tok); code != 404 {
			t.Errorf("unknown business: %d", code)
		}
		code, m, _ = e.do("GET", "/admin/api/businesses", "", "", tok)
		if l, _ := m["businesses"].([]any); code != 200 || len(l) != 1 {
			t.Errorf("businesses: %d %v", code, m)
		}

		// Audit: every change, by the token actor, newest first, no secret.
		actions, raw := e.tokenAudit(tok, true)
		want := []string{"client.create pub", "client.create conf", "client.update conf", "client.update conf", "client.update conf", "client.update pub", "client.disable pub", "client.enable pub",
			"client.rotate_secret conf", "client.delete conf", "user.create staff@example.com", "user.set_admin staff@example.com",
			"catalog.import cafe", "catalog.export yaml", "catalog.export json", "business.agent_booking cafe"}
		if strings.Join(actions, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit actions:\n%s\nwant\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
		}
		for _, leak := range []string{secret, secret2, pw, "hs256$", "argon2"} {
			if strings.Contains(raw, leak) {
				t.Errorf("audit log contains a secret (%.6s…)", leak)
			}
		}
		code, m, _ = e.do("GET", "/admin/api/audit?limit=2", "", "", tok)
		if code != 200 || m["has_more"] != true || m["next_offset"] != float64(2) {
			t.Errorf("audit page: %v", m)
		}
	})
}
