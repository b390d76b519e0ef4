package authhttp_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestAccessTokenLifetimeExact issues 1,000 access tokens through the token
// endpoint — 20 from authorization codes, the rest from refresh rotations —
// and requires exp − iat = 900 s for every one (docs/reference.md §2: at most 15
// minutes; fosite rounds exp to the nearest second while iat is truncated,
// which made about half of them 901 s). iat is never in the future.
func TestAccessTokenLifetimeExact(t *testing.T) {
	const tokens, codes = 1000, 20
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		lifetimes := map[int64]int{}
		check := func(m map[string]any) {
			t.Helper()
			at, _ := m["access_token"].(string)
			parts := strings.Split(at, ".")
			if len(parts) != 3 {
				t.Fatalf("access token is not a JWS: %v", m)
			}
			payload, err := base64.RawURLEncoding.DecodeString(parts[1])
			if err != nil {
				t.Fatal(err)
			}
			var cl struct{ Exp, Iat int64 }
			if err := json.Unmarshal(payload, &cl); err != nil {
				t.Fatal(err)
			}
			if cl.Iat > time.Now().Unix() {
				t.Fatalf("iat %d is in the future", cl.Iat)
			}
			if in, _ := m["expires_in"].(float64); in > 900 || in < 898 {
				t.Fatalf("expires_in %v", m["expires_in"])
			}
			lifetimes[cl.Exp-cl.Iat]++
		}
		n := 0
		for range codes {
			v := oauth2.GenerateVerifier()
			st, m := exchange(e, publicID, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v)), v, nil)
			if st != 200 {
				t.Fatalf("exchange: %d %v", st, m)
			}
			check(m)
			n++
			rt := m["refresh_token"].(string)
			for range (tokens - codes) / codes {
				st, m := refresh(e, publicID, rt)
				if st != 200 {
					t.Fatalf("refresh: %d %v", st, m)
				}
				check(m)
				n++
				rt = m["refresh_token"].(string)
			}
		}
		t.Logf("%d access tokens issued; exp − iat in seconds → count: %v", n, lifetimes)
		if n != tokens || len(lifetimes) != 1 || lifetimes[900] != tokens {
			t.Fatalf("exp − iat over %d tokens: %v, want 900 s for all %d", n, lifetimes, tokens)
		}
	})
}
