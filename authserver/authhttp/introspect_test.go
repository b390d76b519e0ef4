package authhttp_test

import (
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestIntrospectExpiry: introspection reports each token's own exp — the
// access token's 15 minutes, the refresh token's idle lifetime (30 days in
// the harness) — not the access token's for both.
func TestIntrospectExpiry(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		v := oauth2.GenerateVerifier()
		st, m := exchange(e, publicID, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v)), v, nil)
		if st != 200 {
			t.Fatalf("exchange: %d %v", st, m)
		}
		now := time.Now()
		for _, tc := range []struct {
			name     string
			token    string
			lifetime time.Duration
		}{
			{"access token", m["access_token"].(string), 15 * time.Minute},
			{"refresh token", m["refresh_token"].(string), 30 * 24 * time.Hour},
		} {
			in := e.introspect(tc.token)
			exp, _ := in["exp"].(float64)
			got := time.Unix(int64(exp), 0)
			if in["active"] != true || got.Before(now.Add(tc.lifetime-time.Minute)) || got.After(now.Add(tc.lifetime+time.Minute)) {
				t.Errorf("%s: introspection %v: exp %v, want about now + %v", tc.name, in, got, tc.lifetime)
			}
		}
	})
}
