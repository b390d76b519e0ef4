package consentui_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/passkey/softkey"
)

// localIssuer is an issuer passkeys work with; the handler tests' client
// talks to the test server directly, so only the origin in the answers
// must match it.
const localIssuer = "http://localhost:8080"

var (
	optionsRE  = regexp.MustCompile(`data-options="([^"]+)"`)
	ceremonyRE = regexp.MustCompile(`name="ceremony" value="([^"]+)"`)
)

// ceremonyOn returns the CSRF token, ceremony handle and options of the
// passkey form on a page body.
func ceremonyOn(t *testing.T, body string) (csrf, handle, options string) {
	t.Helper()
	c, h, o := csrfRE.FindStringSubmatch(body), ceremonyRE.FindStringSubmatch(body), optionsRE.FindStringSubmatch(body)
	if c == nil || h == nil || o == nil {
		t.Fatalf("no passkey form on the page:\n%s", body)
	}
	return html.UnescapeString(c[1]), html.UnescapeString(h[1]), html.UnescapeString(o[1])
}

// addPasskey registers a passkey on auth from the passkeys page.
func addPasskey(t *testing.T, c *client, auth *softkey.Authenticator, name string) resp {
	t.Helper()
	csrf, h, o := ceremonyOn(t, c.get("/account/passkeys").body)
	answer, _, err := auth.Create(o, localIssuer)
	must(t, err, "create")
	return c.do(http.MethodPost, "/account/passkeys", url.Values{"csrf_token": {csrf}, "ceremony": {h}, "name": {name}, "credential": {string(answer)}})
}

// passkeySignIn answers the sign-in page's ceremony with auth.
func passkeySignIn(t *testing.T, c *client, auth *softkey.Authenticator, next string) resp {
	t.Helper()
	csrf, h, o := ceremonyOn(t, c.get(withNextQuery("/login", next)).body)
	answer, _, err := auth.Get(o, localIssuer)
	must(t, err, "get")
	form := url.Values{"csrf_token": {csrf}, "ceremony": {h}, "credential": {string(answer)}}
	if next != "" {
		form.Set("next", next)
	}
	return c.do(http.MethodPost, "/login/passkey", form)
}

func withNextQuery(path, next string) string {
	if next == "" {
		return path
	}
	return path + "?next=" + url.QueryEscape(next)
}

// TestPasskeyPages: add a passkey on the account page, sign out, sign in
// with it (no address typed) back to where the person was going, see its
// last use, rename it, remove it, and be refused afterwards. Bad answers
// and forms without a CSRF token change nothing.
func TestPasskeyPages(t *testing.T) {
	e := newEnv(t, envOpts{issuer: localIssuer})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("ada@example.com", testPassword)
	auth := &softkey.Authenticator{}

	page := c.get("/account/passkeys")
	if page.status != 200 || !strings.Contains(page.body, "You have no passkey yet") || !strings.Contains(page.body, `<script src="/static/passkey.js" defer></script>`) {
		t.Fatalf("passkeys page: %d %s", page.status, page.body)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	if regexp.MustCompile(`<script(?:[^>]*)>[^<]`).MatchString(page.body) || strings.Contains(page.body, " onclick=") {
		t.Error("inline script on the passkeys page")
	}
	if b := c.get("/account").body; !strings.Contains(b, `href="/account/passkeys"`) || strings.Contains(b, "Not available") {
		t.Error("the account page does not offer the passkeys")
	}
	js := c.get("/static/passkey.js")
	if js.status != 200 || !strings.Contains(js.header.Get("Content-Type"), "javascript") || !strings.Contains(js.body, "navigator.credentials.create") {
		t.Errorf("script: %d %q", js.status, js.header.Get("Content-Type"))
	}

	// Bad answers: 400 or 422 with a message, nothing added.
	csrf, h, _ := ceremonyOn(t, c.get("/account/passkeys").body)
	for _, bad := range []string{"", "not json", `{"type":"public-key"}`, `{"id":1}`} {
		r := c.do(http.MethodPost, "/account/passkeys", url.Values{"csrf_token": {csrf}, "ceremony": {h}, "name": {"x"}, "credential": {bad}})
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "No passkey was added: the browser&#39;s answer could not be read") {
			t.Errorf("answer %q: %d", bad, r.status)
		}
	}
	if r := c.do(http.MethodPost, "/account/passkeys", url.Values{"ceremony": {h}, "credential": {"{}"}}); r.status != http.StatusForbidden {
		t.Errorf("without CSRF: %d", r.status)
	}
	if ps, _ := e.store.ListPasskeys(bg, acct.ID); len(ps) != 0 {
		t.Fatalf("bad answers added %d passkeys", len(ps))
	}

	r := addPasskey(t, c, auth, "Ada's phone")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/account/passkeys?done=added" {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	page = c.get("/account/passkeys?done=added")
	for _, want := range []string{"Your passkey was added", "Ada&#39;s phone", "Not used yet"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("passkeys page lacks %q", want)
		}
	}
	if ms := e.mail.all(); len(ms) == 0 || ms[len(ms)-1].Topic != identity.TopicPasskeyAdded {
		t.Errorf("no passkey e-mail: %+v", ms)
	}

	// Sign out, then in with the passkey only.
	c.post("/account", "/logout", url.Values{})
	if r := c.get("/account"); r.status != http.StatusSeeOther {
		t.Fatalf("still signed in: %d", r.status)
	}
	login := c.get("/login")
	if !strings.Contains(login.body, "Sign in with a passkey") || !strings.Contains(login.body, `data-passkey="get"`) {
		t.Fatal("no passkey sign-in on the sign-in page")
	}
	r = passkeySignIn(t, c, auth, "/account/activity")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/account/activity" {
		t.Fatalf("passkey sign-in: %d %s", r.status, r.body)
	}
	page = c.get("/account/passkeys")
	if !strings.Contains(page.body, "Last used") {
		t.Error("last use not shown")
	}

	ps, _ := e.store.ListPasskeys(bg, acct.ID)
	// The export lists the passkey by name, without its key.
	var doc struct {
		Passkeys []struct {
			Name       string
			LastUsedAt *time.Time `json:"last_used_at"`
		}
	}
	exp := c.get("/account/export")
	must(t, json.Unmarshal([]byte(exp.body), &doc), "export")
	if len(doc.Passkeys) != 1 || doc.Passkeys[0].Name != "Ada's phone" || doc.Passkeys[0].LastUsedAt == nil ||
		strings.Contains(exp.body, "publicKey") || strings.Contains(exp.body, base64.RawURLEncoding.EncodeToString(ps[0].CredentialID)) {
		t.Errorf("export: %+v\n%s", doc.Passkeys, exp.body)
	}
	csrf = c.csrf("/account/passkeys")
	if r := c.do(http.MethodPost, "/account/passkeys/rename", url.Values{"csrf_token": {csrf}, "passkey_id": {ps[0].ID}, "name": {"Work\x00laptop"}}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("bad name: %d", r.status)
	}
	if r := c.do(http.MethodPost, "/account/passkeys/rename", url.Values{"csrf_token": {csrf}, "passkey_id": {ps[0].ID}, "name": {"Work laptop"}}); r.status != http.StatusSeeOther {
		t.Errorf("rename: %d", r.status)
	}
	if !strings.Contains(c.get("/account/passkeys").body, "Work laptop") {
		t.Error("new name not shown")
	}

	// Another person cannot remove it.
	other := e.client()
	other.signUpAndIn("bob@example.com", testPassword)
	if r := other.post("/account/passkeys", "/account/passkeys/remove", url.Values{"passkey_id": {ps[0].ID}}); r.status != http.StatusNotFound {
		t.Errorf("removed by another account: %d", r.status)
	}
	if r := c.post("/account/passkeys", "/account/passkeys/remove", url.Values{"passkey_id": {ps[0].ID}}); r.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.status)
	}
	c.post("/account", "/logout", url.Values{})
	r = passkeySignIn(t, c, auth, "")
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "You are not signed in: this passkey is not registered with Linkslot") {
		t.Errorf("removed passkey: %d %s", r.status, r.body)
	}
	if r := c.get("/account"); r.status != http.StatusSeeOther {
		t.Errorf("a removed passkey signed in: %d", r.status)
	}
	// Password sign-in is untouched.
	if r := c.logIn("ada@example.com", testPassword); r.status != http.StatusSeeOther {
		t.Errorf("password sign-in: %d", r.status)
	}
}

// With an IP-address issuer the pages say why passkeys are unavailable,
// offer no ceremony, and the server refuses one.
func TestPasskeysUnavailableForIPIssuer(t *testing.T) {
	e := newEnv(t, envOpts{issuer: "http://127.0.0.1:8080"})
	c := e.client()
	c.signUpAndIn("ada@example.com", testPassword)
	page := c.get("/account/passkeys")
	if page.status != 200 || !strings.Contains(page.body, "IP address 127.0.0.1") || strings.Contains(page.body, "data-passkey") || strings.Contains(page.body, "<script") {
		t.Fatalf("passkeys page: %d %s", page.status, page.body)
	}
	if b := c.get("/account").body; !strings.Contains(b, "Not available on this server") || !strings.Contains(b, "this server is set up with the IP address 127.0.0.1") {
		t.Errorf("the account page does not say why passkeys are unavailable:\n%s", b)
	}
	c.post("/account", "/logout", url.Values{})
	if b := c.get("/login").body; strings.Contains(b, "passkey") {
		t.Error("the sign-in page offers passkeys")
	}
	r := c.post("/login", "/login/passkey", url.Values{"ceremony": {"x"}, "credential": {"{}"}})
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "passkeys are not available on this server") {
		t.Errorf("passkey sign-in: %d %s", r.status, r.body)
	}
}

// Deleting with a passkey: another authenticator's answer deletes nothing;
// the account's own passkey deletes the account.
func TestDeleteWithPasskey(t *testing.T) {
	e := newEnv(t, envOpts{issuer: localIssuer})
	bg := context.Background()
	c := e.client()
	acct := c.signUpAndIn("leaving@example.com", testPassword)
	if strings.Contains(c.get("/account/delete").body, "Delete with a passkey") {
		t.Error("passkey confirmation offered without a passkey")
	}
	auth := &softkey.Authenticator{}
	if r := addPasskey(t, c, auth, "phone"); r.status != http.StatusSeeOther {
		t.Fatalf("add: %d", r.status)
	}
	page := c.get("/account/delete")
	if !strings.Contains(page.body, "Delete with a passkey") {
		t.Fatal("no passkey confirmation on the delete page")
	}
	stranger := &softkey.Authenticator{}
	_, _, err := stranger.Create(`{"publicKey":{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","rp":{"id":"localhost"},"user":{"id":"eA"}}}`, localIssuer)
	must(t, err, "a stranger's key")
	csrf, h, o := ceremonyOn(t, page.body)
	wrong, err := stranger.Sign(stranger.Keys[0], o, localIssuer)
	must(t, err, "sign")
	r := c.do(http.MethodPost, "/account/delete", url.Values{"csrf_token": {csrf}, "ceremony": {h}, "confirm": {"yes"}, "credential": {string(wrong)}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Nothing was deleted") {
		t.Errorf("wrong passkey: %d %s", r.status, r.body)
	}
	csrf, h, o = ceremonyOn(t, c.get("/account/delete").body)
	r = c.do(http.MethodPost, "/account/delete", url.Values{"csrf_token": {csrf}, "ceremony": {h}, "confirm": {"yes"}, "credential": {"garbage"}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "Nothing was deleted") {
		t.Errorf("malformed answer: %d", r.status)
	}
	if a, _ := e.store.GetAccount(bg, acct.ID); a.DeletedAt != nil {
		t.Fatal("deleted by a failed confirmation")
	}
	right, _, err := auth.Get(o, localIssuer)
	must(t, err, "get")
	r = c.do(http.MethodPost, "/account/delete", url.Values{"csrf_token": {csrf}, "ceremony": {h}, "confirm": {"yes"}, "credential": {string(right)}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Your account was deleted") {
		t.Fatalf("delete with a passkey: %d %s", r.status, r.body)
	}
	if a, _ := e.store.GetAccount(bg, acct.ID); a.DeletedAt == nil {
		t.Fatal("not deleted")
	}
	if ps, _ := e.store.ListPasskeys(bg, acct.ID); len(ps) != 0 {
		t.Errorf("passkeys kept after deletion: %d", len(ps))
	}
}
