package fositestore

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"
)

// BenchmarkStoredRequest: encoding a refresh token's stored request and
// decoding it again, as every rotation does once each.
//
//	go test ./authserver/internal/fositestore -run '^$' -bench StoredRequest
func BenchmarkStoredRequest(b *testing.B) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	sess := &Session{Subject: "acc_0123456789abcdef", LinkID: "lnk_0123456789abcdef", ClientID: "demo-mcp-client", AuthTime: at, GrantedAt: at,
		ExpiresAt: map[fosite.TokenType]time.Time{fosite.AccessToken: at.Add(15 * time.Minute), fosite.RefreshToken: at.Add(30 * 24 * time.Hour),
			fosite.AuthorizeCode: at.Add(time.Minute)},
		IDClaims: &jwt.IDTokenClaims{Subject: "acc_0123456789abcdef", Issuer: "http://127.0.0.1:8080", Audience: []string{"demo-mcp-client"},
			Nonce: "n-0123456789", AuthTime: at, RequestedAt: at, IssuedAt: at, ExpiresAt: at.Add(time.Hour), Extra: map[string]any{"email": "demo@example.com"}},
		IDHeaders: &jwt.Headers{Extra: map[string]any{}}, AccessIssuedAt: at}
	r := &fosite.Request{ID: "req-0123456789abcdef0123456789", RequestedAt: at, Client: &fosite.DefaultClient{ID: "demo-mcp-client"},
		RequestedScope: fosite.Arguments{"openid", "bookings:read", "bookings:write"}, GrantedScope: fosite.Arguments{"openid", "bookings:read", "bookings:write"},
		RequestedAudience: fosite.Arguments{}, GrantedAudience: fosite.Arguments{"http://127.0.0.1:8081/mcp"},
		Form: url.Values{}, Session: sess}
	raw, err := Encode(r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := Encode(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			sr := storedRequest{Session: &Session{}}
			if err := json.Unmarshal(raw, &sr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
