package clients_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

func valid() store.Client {
	return store.Client{ID: "demo", Name: "Demo", Public: true,
		RedirectURIs:  []string{"http://127.0.0.1/callback", "https://app.example/cb"},
		AllowedScopes: []string{"openid", "bookings:read", "bookings:write"},
		DefaultScopes: []string{"bookings:read"},
		GrantTypes:    []string{"authorization_code", "refresh_token"}}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(*store.Client)
		errors []string // substrings, every one must appear
	}{
		{"valid", func(*store.Client) {}, nil},
		{"localhost and ipv6 loopback", func(c *store.Client) {
			c.RedirectURIs = []string{"http://localhost:3000/cb", "http://[::1]/cb"}
		}, nil},
		{"the loopback rule: any case of localhost, all of 127/8", func(c *store.Client) {
			c.RedirectURIs = []string{"http://LocalHost/cb", "http://127.0.0.2:7000/cb", "http://[::ffff:127.0.0.1]/cb"}
		}, nil},
		{"http to a name that only resolves to loopback", func(c *store.Client) { c.RedirectURIs = []string{"http://127.0.0.1.nip.io/cb"} }, []string{"must use https"}},
		{"http non loopback", func(c *store.Client) { c.RedirectURIs = []string{"http://app.example/cb"} }, []string{"must use https"}},
		{"fragment", func(c *store.Client) { c.RedirectURIs = []string{"https://app.example/cb#x"} }, []string{"fragment"}},
		{"wildcard", func(c *store.Client) { c.RedirectURIs = []string{"https://*.example/cb"} }, []string{"wildcard"}},
		{"custom scheme", func(c *store.Client) { c.RedirectURIs = []string{"myapp://cb"} }, []string{"must use https"}},
		{"relative", func(c *store.Client) { c.RedirectURIs = []string{"/cb"} }, []string{"absolute"}},
		{"no redirect", func(c *store.Client) { c.RedirectURIs = nil }, []string{"at least one redirect"}},
		{"unknown scope", func(c *store.Client) { c.AllowedScopes = append(c.AllowedScopes, "admin") }, []string{`unknown scope "admin"`}},
		{"default not allowed", func(c *store.Client) { c.DefaultScopes = []string{"email"} }, []string{`default scope "email" is not in the allowed`}},
		{"bad grant", func(c *store.Client) { c.GrantTypes = []string{"authorization_code", "client_credentials"} }, []string{"client_credentials"}},
		{"confidential without secret", func(c *store.Client) { c.Public = false }, []string{"needs a secret"}},
		{"RS256 ID tokens", func(c *store.Client) { c.IDTokenSignedResponseAlg = "RS256" }, nil},
		{"ES256 ID tokens", func(c *store.Client) { c.IDTokenSignedResponseAlg = "ES256" }, nil},
		{"unsupported ID token algorithm", func(c *store.Client) { c.IDTokenSignedResponseAlg = "HS256" },
			[]string{`id_token_signed_response_alg "HS256" is not supported (ES256 or RS256)`}},
		{"ID token algorithm in lower case", func(c *store.Client) { c.IDTokenSignedResponseAlg = "rs256" }, []string{"not supported"}},
		{"right-to-left override in the name", func(c *store.Client) { c.Name = "Claude\u202emoc.tfosorcim" },
			[]string{"name contains the bidirectional control character U+202E"}},
		{"terminal escape in the name", func(c *store.Client) { c.Name = "App\x1b[2J" }, []string{"name contains the control character U+001B"}},
		{"overlong name", func(c *store.Client) { c.Name = strings.Repeat("n", 201) }, []string{"at most 200 are accepted"}},
		{"every problem at once", func(c *store.Client) {
			c.Name = ""
			c.RedirectURIs = []string{"http://evil.example/cb"}
			c.DefaultScopes = []string{"nope"}
		}, []string{"name is required", "must use https", `unknown scope "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mod(&c)
			err := clients.Validate(c)
			if len(tt.errors) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ve *problem.Error
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a *problem.Error", err)
			}
			for _, want := range tt.errors {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if len(ve.Problems) < len(tt.errors) {
				t.Errorf("got %d problems, want ≥ %d", len(ve.Problems), len(tt.errors))
			}
		})
	}
}

func TestMatchRedirect(t *testing.T) {
	reg := []string{"http://127.0.0.1/callback", "http://localhost/callback", "http://[::1]:8000/cb", "https://app.example/cb"}
	tests := []struct {
		req  string
		want bool
	}{
		{"http://127.0.0.1/callback", true},
		{"http://127.0.0.1:51234/callback", true},
		{"http://localhost:9999/callback", true},
		{"http://[::1]:1234/cb", true},
		{"https://app.example/cb", true},
		{"https://app.example:8443/cb", false},
		{"https://app.example/cb/", false},
		{"https://app.example/cb?x=1", false},
		{"http://127.0.0.1:5000/other", false},
		{"http://127.0.0.1:5000/callback?x=1", false},
		{"https://127.0.0.1/callback", false},
		{"http://localhost.evil.example/callback", false},
		{"http://127.0.0.1:5000/callback#frag", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := clients.MatchRedirect(reg, tt.req); got != tt.want {
			t.Errorf("MatchRedirect(%q) = %v, want %v", tt.req, got, tt.want)
		}
	}
}

func TestSecret(t *testing.T) {
	s := clients.GenerateSecret()
	if len(s) < 43 {
		t.Fatalf("secret too short: %d", len(s))
	}
	if clients.GenerateSecret() == s {
		t.Fatal("two secrets equal")
	}
	h, err := clients.HashSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, s) {
		t.Fatal("hash contains the secret")
	}
	h2, _ := clients.HashSecret(s)
	if h == h2 {
		t.Fatal("hash is not salted")
	}
	tests := []struct {
		name, hash, secret string
		want               bool
	}{
		{"match", h, s, true},
		{"other salt match", h2, s, true},
		{"wrong", h, s + "x", false},
		{"empty secret", h, "", false},
		{"garbage hash", "garbage", s, false},
		{"truncated", h[:len(h)-2], s, false},
	}
	for _, tt := range tests {
		if got := clients.CompareSecret(tt.hash, tt.secret); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
}

// Every problem names its field, as the admin API and pages point at it.
func TestValidateFields(t *testing.T) {
	c := valid()
	c.ID, c.Name = "has space", ""
	c.RedirectURIs = []string{"http://evil.example/cb"}
	c.AllowedScopes = []string{"openid", "admin"}
	c.DefaultScopes = []string{"email"}
	c.GrantTypes = []string{"refresh_token"}
	c.IDTokenSignedResponseAlg = "none"
	var ve *problem.Error
	if !errors.As(clients.Validate(c), &ve) {
		t.Fatal("no *problem.Error")
	}
	got := map[string]int{}
	for _, p := range ve.Problems {
		got[p.Path]++
	}
	want := map[string]int{"id": 1, "name": 1, "redirect_uris": 1, "allowed_scopes": 1, "default_scopes": 1, "grant_types": 1, "id_token_signed_response_alg": 1}
	for f, n := range want {
		if got[f] != n {
			t.Errorf("field %s: %d problems, want %d (%+v)", f, got[f], n, ve.Problems)
		}
	}
}

// TestPrivateUseRedirects: a native app's own scheme in reverse-DNS form
// is a redirect URI (RFC 8252 §7.1), as is Cursor's dotless scheme with a
// reverse-DNS authority; schemes that browsers or systems own, and
// schemes without any dotted name, are not.
func TestPrivateUseRedirects(t *testing.T) {
	for _, c := range []struct {
		uri, target string
		ok          bool
	}{
		{"cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp", true},
		{"com.example.app:/oauth/callback", "com.example.app:", true},
		{"com.example.app://callback", "com.example.app://callback", true},
		{"vscode://vscode.github-authentication/did-authenticate", "vscode://vscode.github-authentication", true},
		{"myapp://cb", "", false},
		{"myapp:/cb", "", false},
		{"cursor://anysphere.cursor-mcp/cb#frag", "", false},
		{"cursor://user@anysphere.cursor-mcp/cb", "", false},
		{"cursor://10.0.0.1/cb", "", false},
		{"cursor://anysphere.cursor-mcp:99/cb", "", false},
		{"javascript://x.example/%0aalert(1)", "", false},
		{"data://x.example/text", "", false},
		{"file://host.example/etc/passwd", "", false},
		{"web+app://x.example/cb", "", false},
		{".com.example:/cb", "", false},
	} {
		err := clients.ValidateRedirectURI(c.uri)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want accepted %v", c.uri, err, c.ok)
		}
		if c.ok {
			if got := clients.ReturnTarget(c.uri); got != c.target {
				t.Errorf("%s: return target %q, want %q", c.uri, got, c.target)
			}
			if !clients.MatchRedirect([]string{c.uri}, c.uri) || clients.MatchRedirect([]string{c.uri}, c.uri+"x") {
				t.Errorf("%s: matched other than exactly", c.uri)
			}
		}
	}
	if got := clients.ReturnTarget("https://claude.ai/api/mcp/auth_callback"); got != "claude.ai" {
		t.Errorf("https return target %q", got)
	}
}

func TestNormalizeName(t *testing.T) {
	if got := clients.NormalizeName("  Cafe\u0301 App "); got != "Caf\u00e9 App" {
		t.Errorf("NormalizeName = %q, want the trimmed NFC form", got)
	}
}
