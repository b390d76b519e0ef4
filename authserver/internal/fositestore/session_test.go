package fositestore_test

import (
	"encoding/json"
	"strings"
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
		if err := json.Unmarshal(raw, &back); err != nil || back.AccessIssuedAt == nil || !back.AccessIssuedAt.Equal(base) || !back.GetExpiresAt(fosite.AccessToken).Equal(exp) {
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

// TestStoredFormUnchanged: a request is stored as the JSON it always was —
// the request's fields, then the session as a nested object, byte for byte
// what marshalling the session apart gives — so rows written by an earlier
// version still decode.
func TestStoredFormUnchanged(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sess := &fositestore.Session{Subject: "acct", LinkID: "lnk", ClientID: "app", AuthTime: at, GrantedAt: at,
		ExpiresAt: map[fosite.TokenType]time.Time{fosite.RefreshToken: at.Add(time.Hour)},
		IDClaims:  &jwt.IDTokenClaims{Subject: "acct", Nonce: "n1"}, Extra: map[string]any{"k": "v"}}
	r := &fosite.Request{ID: "req-1", RequestedAt: at, Client: &fosite.DefaultClient{ID: "app"},
		RequestedScope: fosite.Arguments{"openid"}, GrantedScope: fosite.Arguments{"openid"},
		RequestedAudience: fosite.Arguments{}, GrantedAudience: fosite.Arguments{"https://rs/mcp"},
		Form: map[string][]string{"client_id": {"app"}}, Session: sess}
	got, err := fositestore.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"req-1","requested_at":"2026-12-01T12:00:00Z","client_id":"app","requested_scopes":["openid"],"granted_scopes":["openid"],"requested_audience":[],"granted_audience":["https://rs/mcp"],"form":{"client_id":["app"]},"session":SESSION}`
	rawSess, _ := json.Marshal(sess)
	want = strings.Replace(want, "SESSION", string(rawSess), 1)
	if string(got) != string(want) {
		t.Fatalf("stored form changed:\n got %s\nwant %s", got, want)
	}
}
