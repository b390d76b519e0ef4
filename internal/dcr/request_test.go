package dcr

import (
	"slices"
	"strings"
	"testing"
)

// TestCutScopes: what a registration is allowed, for each kind of ask.
func TestCutScopes(t *testing.T) {
	all := DefaultPolicyScopes
	for _, c := range []struct {
		ask, policy []string
		want        string
	}{
		{nil, all, "openid offline_access bookings:read bookings:write"},
		{[]string{"openid"}, all, "openid bookings:read bookings:write"},
		{[]string{"openid", "offline_access"}, all, "openid offline_access bookings:read bookings:write"},
		{[]string{"bookings:read"}, all, "openid bookings:read"},
		{[]string{"profile", "email", "bookings:write"}, all, "openid bookings:write"},
		{[]string{"mcp:tools"}, all, "openid bookings:read bookings:write"},
		{[]string{"openid", "profile"}, []string{"openid", "profile", "bookings:read"}, "openid profile bookings:read"},
		{[]string{"bookings:write"}, []string{"bookings:read"}, "bookings:read"},
	} {
		if got := strings.Join(CutScopes(c.ask, c.policy), " "); got != c.want {
			t.Errorf("CutScopes(%v, %v) = %q, want %q", c.ask, c.policy, got, c.want)
		}
	}
	if got := DefaultScopes([]string{"openid", "offline_access", "bookings:read", "bookings:write"}); !slices.Equal(got, []string{"bookings:read", "bookings:write"}) {
		t.Errorf("DefaultScopes = %v", got)
	}
}

// TestParseDefaults: an almost empty registration is a public client of
// the authorization code and refresh grants, named DefaultName.
func TestParseDefaults(t *testing.T) {
	m, err := Parse([]byte(`{"redirect_uris":["http://127.0.0.1/cb","http://127.0.0.1/cb"],"client_name":"  Goose  "}`), DefaultPolicyScopes)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Public() || m.ClientName != "Goose" || !slices.Equal(m.RedirectURIs, []string{"http://127.0.0.1/cb"}) ||
		!slices.Equal(m.GrantTypes, []string{"authorization_code", "refresh_token"}) || !slices.Equal(m.ResponseTypes, []string{"code"}) ||
		m.Scope != "openid offline_access bookings:read bookings:write" {
		t.Fatalf("defaults %+v", m)
	}
	if m, _ := Parse([]byte(`{"redirect_uris":["https://a.example/cb"]}`), DefaultPolicyScopes); m.ClientName != DefaultName {
		t.Fatalf("unnamed client called %q", m.ClientName)
	}
}

// TestParseClientNameText: a registered name passes the text rule
// (docs/reference.md §4): bidi overrides and terminal escapes are refused,
// naming client_name, and an accepted name is stored in NFC.
func TestParseClientNameText(t *testing.T) {
	for _, name := range []string{`Claude\u202emoc.tfosorcim`, `App\u001b[2J`, `A\u0085pp`, `App\u2066x`} {
		_, err := Parse([]byte(`{"redirect_uris":["https://a.example/cb"],"client_name":"`+name+`"}`), DefaultPolicyScopes)
		if err == nil || !strings.Contains(err.Error(), "client_name") {
			t.Errorf("client_name %s: %v, want a refusal naming client_name", name, err)
		}
	}
	m, err := Parse([]byte(`{"redirect_uris":["https://a.example/cb"],"client_name":"Cafe\u0301"}`), DefaultPolicyScopes)
	if err != nil || m.ClientName != "Caf\u00e9" {
		t.Fatalf("client_name = %q, %v; want the NFC form", m.ClientName, err)
	}
}
