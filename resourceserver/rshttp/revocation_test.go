package rshttp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// oauthClient plays an agent doing the authorization code flow by hand
// (PKCE S256, resource indicator) against the system's real
// authorization server.
func (sys *system) oauthClient() *oauth2.Config {
	return &oauth2.Config{
		ClientID:    demo.ClientID,
		RedirectURL: "http://127.0.0.1/callback",
		Scopes:      []string{"openid", "offline_access", "bookings:read"},
		Endpoint: oauth2.Endpoint{AuthURL: sys.as.URL + "/oauth2/authorize", TokenURL: sys.as.URL + "/oauth2/token",
			AuthStyle: oauth2.AuthStyleInParams},
	}
}

// code runs the browser part of the flow and returns the code with its
// PKCE verifier.
func (sys *system) code(cfg *oauth2.Config) (code, verifier string) {
	sys.t.Helper()
	verifier = oauth2.GenerateVerifier()
	u := cfg.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", sys.resource))
	res, err := sys.fetcher(sys.ctx, &auth.AuthorizationArgs{URL: u})
	if err != nil {
		sys.t.Fatal(err)
	}
	return res.Code, verifier
}

func (sys *system) exchange(cfg *oauth2.Config, code, verifier string) (*oauth2.Token, error) {
	return cfg.Exchange(sys.ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", sys.resource))
}

func (sys *system) refresh(cfg *oauth2.Config, rt string) (*oauth2.Token, error) {
	return cfg.TokenSource(sys.ctx, &oauth2.Token{RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)}).Token()
}

// mcpStatus is the status /mcp answers a tools/list with the token.
func (sys *system) mcpStatus(token string) int {
	sys.t.Helper()
	req, _ := http.NewRequestWithContext(sys.ctx, http.MethodPost, sys.resource, strings.NewReader(toolsList))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		sys.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		sys.t.Fatalf("401 without invalid_token: %q", resp.Header.Get("WWW-Authenticate"))
	}
	return resp.StatusCode
}

// refusedWithin5s checks the token works now, lets revoke run, moves the
// resource server's clock 5 s on (past its cache period) and expects 401.
func (sys *system) refusedWithin5s(token string, revoke func()) {
	sys.t.Helper()
	if got := sys.mcpStatus(token); got != http.StatusOK {
		sys.t.Fatalf("before revocation: %d, want 200", got)
	}
	revoke()
	sys.rsAhead.Add(int64(5 * time.Second))
	if got := sys.mcpStatus(token); got != http.StatusUnauthorized {
		sys.t.Fatalf("5 s after revocation: %d, want 401 invalid_token", got)
	}
}

// TestRevokedAccessTokensRefused: every way the authorization server
// revokes an access token is honoured at /mcp within 5 seconds, not only
// link revocation.
func TestRevokedAccessTokensRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		sys := newSystemOn(t, false, s)
		cfg := sys.oauthClient()

		t.Run("authorization code reuse", func(t *testing.T) {
			sys.t = t
			code, verifier := sys.code(cfg)
			tok, err := sys.exchange(cfg, code, verifier)
			if err != nil {
				t.Fatal(err)
			}
			sys.refusedWithin5s(tok.AccessToken, func() {
				if _, err := sys.exchange(cfg, code, verifier); err == nil {
					t.Fatal("a reused code was exchanged")
				}
			})
		})

		t.Run("RFC 7009 revocation", func(t *testing.T) {
			sys.t = t
			code, verifier := sys.code(cfg)
			tok, err := sys.exchange(cfg, code, verifier)
			if err != nil {
				t.Fatal(err)
			}
			sys.refusedWithin5s(tok.AccessToken, func() {
				resp, err := http.PostForm(sys.as.URL+"/oauth2/revoke", url.Values{"token": {tok.AccessToken},
					"token_type_hint": {"access_token"}, "client_id": {demo.ClientID}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("revoke: %d", resp.StatusCode)
				}
			})
		})

		t.Run("refresh token reuse", func(t *testing.T) {
			sys.t = t
			code, verifier := sys.code(cfg)
			first, err := sys.exchange(cfg, code, verifier)
			if err != nil {
				t.Fatal(err)
			}
			if first.RefreshToken == "" {
				t.Fatal("no refresh token")
			}
			second, err := sys.refresh(cfg, first.RefreshToken)
			if err != nil {
				t.Fatal(err)
			}
			sys.refusedWithin5s(second.AccessToken, func() {
				if _, err := sys.refresh(cfg, first.RefreshToken); err == nil {
					t.Fatal("a used refresh token was accepted")
				}
			})
		})
	})
}
