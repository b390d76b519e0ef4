package fositestore_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
)

// TestAccessTokenInstants: whatever the fraction of the second an access
// token is issued in, its iat is that whole second, never later than now,
// and its exp is exactly AccessTokenLifespan after it, whatever rounding
// fosite applied to the exp it passes in. The instants survive a clone and
// the session's JSON round trip.
func TestAccessTokenInstants(t *testing.T) {
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, frac := range []time.Duration{0, 400 * time.Millisecond, 500 * time.Millisecond, 999 * time.Millisecond} {
		now := base.Add(frac)
		s := &fositestore.Session{Subject: "acct", Clock: func() time.Time { return now }}
		s.SetExpiresAt(fosite.AccessToken, now.Add(fositestore.AccessTokenLifespan).Round(time.Second))
		claims := s.GetJWTClaims().(*jwt.JWTClaims)
		exp := s.GetExpiresAt(fosite.AccessToken)
		if !claims.IssuedAt.Equal(base) || exp.Sub(claims.IssuedAt) != fositestore.AccessTokenLifespan {
			t.Errorf("issued at +%v: iat %v exp %v", frac, claims.IssuedAt, exp)
		}
		raw, _ := json.Marshal(s.Clone())
		var back fositestore.Session
		if err := json.Unmarshal(raw, &back); err != nil || !back.AccessIssuedAt.Equal(base) || !back.GetExpiresAt(fosite.AccessToken).Equal(exp) {
			t.Errorf("round trip: %+v %v", back, err)
		}
		// Other expiries are kept as given.
		rt := now.Add(time.Hour)
		s.SetExpiresAt(fosite.RefreshToken, rt)
		if !s.GetExpiresAt(fosite.RefreshToken).Equal(rt) {
			t.Errorf("refresh expiry changed")
		}
	}
}
