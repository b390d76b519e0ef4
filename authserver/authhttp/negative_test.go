package authhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// expectRedirectError asserts that the authorize request is answered with a
// redirect to the client carrying error code want, state and iss.
func expectRedirectError(t *testing.T, e *env, authURL, want string) {
	t.Helper()
	resp := e.get(authURL, e.account.ID)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d, want a redirect with error %s", resp.StatusCode, want)
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	q := u.Query()
	if q.Get("error") != want || q.Get("code") != "" || q.Get("iss") != e.issuer || q.Get("state") != "state-1234567890" {
		t.Fatalf("redirect %s, want error=%s with iss and state", u, want)
	}
}

// expectErrorPage asserts an error page and no redirect.
func expectErrorPage(t *testing.T, e *env, authURL string) {
	t.Helper()
	resp := e.get(authURL, e.account.ID)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.Header.Get("Location") != "" || resp.Header.Get("X-Test-Page") != "error" {
		t.Fatalf("status %d, location %q: want an error page and no redirect", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func exchange(e *env, clientID, code, verifier string, extra url.Values, basic ...string) (int, map[string]any) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e.redirect},
		"code_verifier": {verifier}}
	if len(basic) == 0 {
		form.Set("client_id", clientID)
	} else {
		form.Set("redirect_uri", "https://app.example/cb")
	}
	for k, v := range extra {
		form[k] = v
	}
	st, m, h := e.tokenForm("/oauth2/token", form, basic...)
	if h.Get("Cache-Control") != "no-store" {
		e.t.Fatalf("token answer without Cache-Control: no-store")
	}
	return st, m
}

func refresh(e *env, clientID, rt string) (int, map[string]any) {
	st, m, _ := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}})
	return st, m
}

func TestNegative(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		v := oauth2.GenerateVerifier()
		s256 := oauth2.S256ChallengeOption(v)
		withParam := func(k, val string) oauth2.AuthCodeOption { return oauth2.SetAuthURLParam(k, val) }
		tokens := func(t *testing.T) (code string, m map[string]any) {
			code = e.code(c, e.account.ID, s256)
			st, m := exchange(e, publicID, code, v, nil)
			if st != 200 {
				t.Fatalf("exchange: %d %v", st, m)
			}
			return code, m
		}

		tests := []struct {
			name string
			run  func(t *testing.T)
		}{
			{"missing PKCE", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890"), "invalid_request")
			}},
			{"plain PKCE", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890", withParam("code_challenge", v), withParam("code_challenge_method", "plain")), "invalid_request")
			}},
			{"code_challenge too short (abc)", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890", withParam("code_challenge", "abc"), withParam("code_challenge_method", "S256")), "invalid_request")
			}},
			{"code_challenge over 128 characters", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890", withParam("code_challenge", strings.Repeat("a", 129)), withParam("code_challenge_method", "S256")), "invalid_request")
			}},
			{"code_challenge with padding", func(t *testing.T) {
				resp := e.get(c.AuthCodeURL("state-1234567890", withParam("code_challenge", strings.Repeat("a", 42)+"="), withParam("code_challenge_method", "S256")), e.account.ID)
				resp.Body.Close()
				u, _ := url.Parse(resp.Header.Get("Location"))
				if q := u.Query(); q.Get("error") != "invalid_request" || !strings.Contains(q.Get("error_description"), "code_challenge must be 43 to 128 base64url characters") || q.Get("iss") != e.issuer {
					t.Fatalf("redirect %s, want invalid_request describing code_challenge, with iss", u)
				}
			}},
			{"challenge without method (plain by default)", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890", withParam("code_challenge", v)), "invalid_request")
			}},
			{"wrong verifier", func(t *testing.T) {
				code := e.code(c, e.account.ID, s256)
				st, m := exchange(e, publicID, code, oauth2.GenerateVerifier(), nil)
				if st != 400 || m["error"] != "invalid_grant" {
					t.Fatalf("%d %v", st, m)
				}
			}},
			{"reused code revokes its tokens", func(t *testing.T) {
				code, m := tokens(t)
				st, m2 := exchange(e, publicID, code, v, nil)
				if st != 400 || m2["error"] != "invalid_grant" {
					t.Fatalf("second redemption: %d %v", st, m2)
				}
				if in := e.introspect(m["access_token"].(string)); in["active"] != false {
					t.Fatalf("access token of a reused code still active: %v", in)
				}
				if st, m3 := refresh(e, publicID, m["refresh_token"].(string)); st != 400 || m3["error"] != "invalid_grant" {
					t.Fatalf("refresh token of a reused code: %d %v", st, m3)
				}
			}},
			{"expired code", func(t *testing.T) {
				code := e.code(c, e.account.ID, s256)
				e.offset.Store(int64(61 * time.Second))
				defer e.offset.Store(0)
				st, m := exchange(e, publicID, code, v, nil)
				if st != 400 || m["error"] != "invalid_grant" {
					t.Fatalf("%d %v", st, m)
				}
			}},
			{"redirect URI mismatch shows a page", func(t *testing.T) {
				bad := *c
				bad.RedirectURL = "https://evil.example/callback"
				expectErrorPage(t, e, bad.AuthCodeURL("state-1234567890", s256))
				bad.RedirectURL = "http://127.0.0.1:5000/other"
				expectErrorPage(t, e, bad.AuthCodeURL("state-1234567890", s256))
			}},
			{"unknown client shows a page", func(t *testing.T) {
				bad := e.oauth("no-such-client", "", "openid")
				expectErrorPage(t, e, bad.AuthCodeURL("state-1234567890", s256))
			}},
			{"disabled client shows a page", func(t *testing.T) {
				ctx := context.Background()
				set := func(d bool) {
					if _, err := s.UpdateClient(ctx, otherID, func(cl storeClient) (storeClient, error) { cl.Disabled = d; return cl, nil }); err != nil {
						t.Fatal(err)
					}
				}
				set(true)
				defer set(false)
				expectErrorPage(t, e, e.oauth(otherID, "", "openid").AuthCodeURL("state-1234567890", s256))
			}},
			{"wrong client secret", func(t *testing.T) {
				cc := e.oauth(confID, e.confSecret, "openid")
				u := e.authorize(cc.AuthCodeURL("state-1234567890", s256), e.account.ID, "allow")
				code := u.Query().Get("code")
				if code == "" {
					t.Fatalf("no code: %v", u)
				}
				st, m := exchange(e, confID, code, v, nil, confID, e.confSecret+"x")
				if st != 401 || m["error"] != "invalid_client" {
					t.Fatalf("%d %v", st, m)
				}
				st, m = exchange(e, confID, code, v, nil, confID, e.confSecret)
				if st != 200 {
					t.Fatalf("right secret after a wrong one: %d %v", st, m)
				}
			}},
			{"scope beyond allowed", func(t *testing.T) {
				o := e.oauth(otherID, "", "openid", "bookings:write")
				expectRedirectError(t, e, o.AuthCodeURL("state-1234567890", s256), "invalid_scope")
			}},
			{"unknown scope", func(t *testing.T) {
				o := e.oauth(publicID, "", "openid", "admin")
				expectRedirectError(t, e, o.AuthCodeURL("state-1234567890", s256), "invalid_scope")
			}},
			{"unknown resource at authorize", func(t *testing.T) {
				expectRedirectError(t, e, c.AuthCodeURL("state-1234567890", s256, withParam("resource", "https://other.example/mcp")), "invalid_target")
			}},
			{"unknown resource at token", func(t *testing.T) {
				code := e.code(c, e.account.ID, s256, withParam("resource", resource))
				st, m := exchange(e, publicID, code, v, url.Values{"resource": {"https://other.example/mcp"}})
				if st != 400 || m["error"] != "invalid_target" {
					t.Fatalf("%d %v", st, m)
				}
				st, m = exchange(e, publicID, code, v, url.Values{"resource": {resource}})
				if st != 200 {
					t.Fatalf("with the configured resource: %d %v", st, m)
				}
			}},
			{"prompt=none signed out", func(t *testing.T) {
				resp := e.get(c.AuthCodeURL("state-1234567890", s256, withParam("prompt", "none")), "")
				resp.Body.Close()
				u, _ := url.Parse(resp.Header.Get("Location"))
				if u.Query().Get("error") != "login_required" {
					t.Fatalf("got %v", u)
				}
			}},
			{"prompt=none without consent", func(t *testing.T) {
				o := e.oauth(otherID, "", "openid")
				expectRedirectError(t, e, o.AuthCodeURL("state-1234567890", s256, withParam("prompt", "none")), "consent_required")
			}},
			{"deny", func(t *testing.T) {
				o := e.oauth(otherID, "", "openid")
				u := e.authorize(o.AuthCodeURL("state-1234567890", s256), e.account2.ID, "deny")
				if u.Query().Get("error") != "access_denied" || u.Query().Get("iss") != e.issuer {
					t.Fatalf("deny: %v", u)
				}
			}},
			{"reused refresh token revokes the family", func(t *testing.T) {
				_, m := tokens(t)
				rt1 := m["refresh_token"].(string)
				st, m2 := refresh(e, publicID, rt1)
				if st != 200 {
					t.Fatalf("first rotation: %d %v", st, m2)
				}
				rt2 := m2["refresh_token"].(string)
				if st, m3 := refresh(e, publicID, rt1); st != 400 || m3["error"] != "invalid_grant" {
					t.Fatalf("reuse: %d %v", st, m3)
				}
				if st, m3 := refresh(e, publicID, rt2); st != 400 || m3["error"] != "invalid_grant" {
					t.Fatalf("newest token of a reused family: %d %v", st, m3)
				}
				if in := e.introspect(m2["access_token"].(string)); in["active"] != false {
					t.Fatalf("access token of a reused family: %v", in)
				}
			}},
			{"refresh with another client's token", func(t *testing.T) {
				_, m := tokens(t)
				st, m2 := refresh(e, otherID, m["refresh_token"].(string))
				if st != 400 || m2["error"] != "invalid_grant" {
					t.Fatalf("%d %v", st, m2)
				}
			}},
			{"revoked access token at introspection", func(t *testing.T) {
				_, m := tokens(t)
				at := m["access_token"].(string)
				if in := e.introspect(at); in["active"] != true {
					t.Fatalf("before revocation: %v", in)
				}
				st, _, _ := e.tokenForm("/oauth2/revoke", url.Values{"token": {at}, "client_id": {publicID}})
				if st != 200 {
					t.Fatalf("revoke %d", st)
				}
				if in := e.introspect(at); in["active"] != false {
					t.Fatalf("after revocation: %v", in)
				}
			}},
			{"introspection refused to public clients", func(t *testing.T) {
				st, m, _ := e.tokenForm("/oauth2/introspect", url.Values{"token": {"x"}, "client_id": {publicID}})
				if st != 401 || m["error"] != "invalid_client" {
					t.Fatalf("%d %v", st, m)
				}
			}},
			{"revoked link refuses refresh", func(t *testing.T) {
				o := e.oauth(otherID, "", "openid")
				code := e.code(o, e.account2.ID, s256)
				st, m := exchange(e, otherID, code, v, nil)
				if st != 200 {
					t.Fatalf("%d %v", st, m)
				}
				l, err := s.GetActiveLink(context.Background(), e.account2.ID, otherID)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RevokeLink(context.Background(), l.ID, e.now()); err != nil {
					t.Fatal(err)
				}
				if st, m2 := refresh(e, otherID, m["refresh_token"].(string)); st != 400 || m2["error"] != "invalid_grant" {
					t.Fatalf("%d %v", st, m2)
				}
			}},
			{"errors never echo secrets", func(t *testing.T) {
				_, _, h := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {"not-a-code"}}, confID, "wrong-secret-value")
				if h.Get("Cache-Control") != "no-store" {
					t.Fatal("error without no-store")
				}
				if strings.Contains(e.logs.String(), "wrong-secret-value") {
					t.Fatal("secret in logs")
				}
			}},
		}
		for _, tt := range tests {
			t.Run(strings.ReplaceAll(tt.name, " ", "_"), tt.run)
		}
		if strings.Contains(e.logs.String(), e.confSecret) {
			t.Fatal("client secret in logs")
		}
	})
}

type storeClient = store.Client
