package authhttp_test

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// simultaneously runs fn n times at once and returns the HTTP statuses.
func simultaneously(n int, fn func() int) []int {
	var wg sync.WaitGroup
	start := make(chan struct{})
	out := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func count(statuses []int, want int) int {
	n := 0
	for _, s := range statuses {
		if s == want {
			n++
		}
	}
	return n
}

// TestConcurrentRedemption: of simultaneous redemptions of one code, or
// rotations of one refresh token, through the token endpoint, exactly one
// succeeds.
func TestConcurrentRedemption(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		for round := 0; round < 3; round++ {
			v := oauth2.GenerateVerifier()
			code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v))
			var mu sync.Mutex
			var refreshTokens []string
			st := simultaneously(6, func() int {
				st, m := exchange(e, publicID, code, v, nil)
				if st == 200 {
					mu.Lock()
					refreshTokens = append(refreshTokens, m["refresh_token"].(string))
					mu.Unlock()
				}
				return st
			})
			if count(st, 200) != 1 {
				t.Fatalf("round %d: redemptions %v, want exactly one 200", round, st)
			}
			rt := refreshTokens[0]
			st = simultaneously(6, func() int {
				st, _ := refresh(e, publicID, rt)
				return st
			})
			if count(st, 200) > 1 {
				t.Fatalf("round %d: rotations %v, more than one succeeded", round, st)
			}
		}
	})
}

// TestKeyRotation: tokens signed before a rotation still verify (JWKS and
// introspection), new ones carry the new kid.
func TestKeyRotation(t *testing.T) {
	s := sqltest.SQLite(t)
	e := newEnv(t, s)
	c := e.oauth(publicID, "", "openid")
	v := oauth2.GenerateVerifier()
	_, m := exchange(e, publicID, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v)), v, nil)
	old := m["access_token"].(string)
	km := keys.NewManager(s, []byte("test-secret-key-test-secret-key-0123"), store.KeyPurposeToken, nil)
	if _, err := km.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	verifyAccessToken(t, e, old)
	if in := e.introspect(old); in["active"] != true {
		t.Fatalf("token signed before the rotation: %v", in)
	}
	st, m2, _ := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)}, "client_id": {publicID}})
	if st != 200 {
		t.Fatalf("refresh after rotation: %d %v", st, m2)
	}
	verifyAccessToken(t, e, m2["access_token"].(string))
}
