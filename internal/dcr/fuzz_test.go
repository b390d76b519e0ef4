package dcr

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/scope"
)

// FuzzParse: the registration request parser never panics; it either
// refuses with an RFC 7591 code and a description, or accepts metadata
// that every rule holds for — and that parses again to itself, since the
// answer is what is stored and read back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","scope":"openid offline_access"}`,
		`{"redirect_uris":["http://127.0.0.1:6274/oauth/callback"],"token_endpoint_auth_method":"client_secret_basic","id_token_signed_response_alg":"RS256"}`,
		`{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"logo_uri":"https://claude.ai/logo.png","contacts":["a@example.com"]}`,
		`{"redirect_uris":["com.example.app:/cb"],"application_type":"native","scope":"bookings:read unknown"}`,
		`{"redirect_uris":"x"}`, `{"redirect_uris":[1]}`, `[]`, `null`, `{}`, `{"redirect_uris":["https://a.example/#"]}`,
		`{"redirect_uris":["javascript://x.example/"]}`, `{"grant_types":["implicit"],"redirect_uris":["https://a.example/"]}`,
		"{\"client_name\":\"\\u0000\",\"redirect_uris\":[\"https://a.example/\"]}", `{"redirect_uris":["https://a.example/"]} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Parse(body, DefaultPolicyScopes)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeInvalidClientMetadata && e.Code != CodeInvalidRedirectURI) || e.Description == "" {
				t.Fatalf("refusal %#v", err)
			}
			return
		}
		if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > MaxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(m.RedirectURIs))
		}
		for _, r := range m.RedirectURIs {
			if clients.ValidateRedirectURI(r) != nil || strings.Contains(r, "#") {
				t.Fatalf("accepted redirect URI %q", r)
			}
		}
		if !slices.Contains([]string{AuthNone, AuthBasic, AuthPost}, m.TokenEndpointAuthMethod) ||
			!slices.Contains(m.GrantTypes, clients.GrantAuthorizationCode) || !slices.Equal(m.ResponseTypes, []string{ResponseCode}) {
			t.Fatalf("accepted %+v", m)
		}
		if m.ClientName == "" || utf8.RuneCountInString(m.ClientName) > MaxNameLength || !utf8.ValidString(m.ClientName) {
			t.Fatalf("accepted name %q", m.ClientName)
		}
		for _, s := range scope.Parse(m.Scope) {
			if !slices.Contains(DefaultPolicyScopes, s) {
				t.Fatalf("scope %q beyond the policy", s)
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(b, DefaultPolicyScopes)
		if err != nil {
			t.Fatalf("the accepted metadata %s is refused when read back: %v", b, err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("read back as %s, stored %s", b2, b)
		}
	})
}
