package authhttp_test

import (
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestStateOptional: OAuth 2.1 with PKCE makes state optional and MCP
// clients omit it. A request without state, or with a short one, is
// served; the redirect then carries back exactly what was sent (no state
// parameter when none was sent) and always iss.
func TestStateOptional(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		for _, tc := range []struct{ name, state string }{{"no state", ""}, {"short state", "abc"}, {"one character", "x"}} {
			t.Run(tc.name, func(t *testing.T) {
				v := oauth2.GenerateVerifier()
				u := e.authorize(c.AuthCodeURL(tc.state, oauth2.S256ChallengeOption(v)), e.account.ID, "allow")
				q := u.Query()
				if q.Get("error") != "" || q.Get("code") == "" {
					t.Fatalf("redirect %s, want a code", u)
				}
				if q.Get("iss") != e.issuer {
					t.Fatalf("redirect %s without iss", u)
				}
				if got, sent := q["state"], tc.state != ""; sent && (len(got) != 1 || got[0] != tc.state) || !sent && got != nil {
					t.Fatalf("redirect %s: state %q, sent %q", u, got, tc.state)
				}
				if st, m := exchange(e, publicID, q.Get("code"), v, nil); st != http.StatusOK {
					t.Fatalf("exchange: %d %v", st, m)
				}
			})
		}
		t.Run("error redirect without state", func(t *testing.T) {
			resp := e.get(c.AuthCodeURL(""), e.account.ID) // no PKCE
			resp.Body.Close()
			u, _ := url.Parse(resp.Header.Get("Location"))
			q := u.Query()
			if q.Get("error") != "invalid_request" || q.Get("iss") != e.issuer || q["state"] != nil {
				t.Fatalf("redirect %s, want error=invalid_request with iss and no state", u)
			}
		})
	})
}
