package fositestore

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"
)

// benchRequest is a refresh token's stored request as a rotation writes it.
func benchRequest() *fosite.Request {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	sess := &Session{Subject: "acc_0123456789abcdef", LinkID: "lnk_0123456789abcdef", ClientID: "demo-mcp-client", AuthTime: at, GrantedAt: at,
		ExpiresAt: map[fosite.TokenType]time.Time{fosite.AccessToken: at.Add(15 * time.Minute), fosite.RefreshToken: at.Add(30 * 24 * time.Hour),
			fosite.AuthorizeCode: at.Add(time.Minute)},
		IDClaims: &jwt.IDTokenClaims{Subject: "acc_0123456789abcdef", Issuer: "http://127.0.0.1:8080", Audience: []string{"demo-mcp-client"},
			Nonce: "n-0123456789", AuthTime: at, RequestedAt: at, IssuedAt: at, ExpiresAt: at.Add(time.Hour), Extra: map[string]any{"email": "demo@example.com"}},
		IDHeaders: &jwt.Headers{Extra: map[string]any{}}, AccessIssuedAt: &at}
	return &fosite.Request{ID: "req-0123456789abcdef0123456789", RequestedAt: at, Client: &fosite.DefaultClient{ID: "demo-mcp-client"},
		RequestedScope: fosite.Arguments{"openid", "bookings:read", "bookings:write"}, GrantedScope: fosite.Arguments{"openid", "bookings:read", "bookings:write"},
		RequestedAudience: fosite.Arguments{}, GrantedAudience: fosite.Arguments{"http://127.0.0.1:8081/mcp"},
		Form: url.Values{}, Session: sess}
}

// Encode writes exactly what encoding/json writes for the stored form, so
// the stored format does not depend on which encoder wrote a row: a full
// refresh session, one with nothing optional set, and one whose strings
// need escaping (HTML characters, quotes, control and non-ASCII
// characters, a URL client) and whose extras nest.
func TestEncodeAsEncodingJSON(t *testing.T) {
	full := benchRequest()
	bare := &fosite.Request{ID: "req-1", Client: &fosite.DefaultClient{ID: "app"}, Form: url.Values{}, Session: &Session{}}
	odd := benchRequest()
	odd.Client = &fosite.DefaultClient{ID: "https://app.example/client.json?a=1&b=<2>"}
	odd.Form = url.Values{"client_id": {"https://app.example/client.json?a=1&b=<2>"}, "state": {"\"quoted\"\u2028\x01 ünïcödé"}}
	sess := odd.Session.(*Session)
	sess.Extra = map[string]any{"n": 1.5, "big": 1e21, "list": []any{"x", 2, nil, true}, "m": map[string]any{"z": 1, "a": "<&>"}}
	sess.IDClaims.Extra = map[string]any{"email": "ana+test@example.com", "amr": []string{"pwd"}}
	sess.IDHeaders = nil
	for name, r := range map[string]*fosite.Request{"full": full, "bare": bare, "escaped": odd} {
		got, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := storedOf(r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(sr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got  %s\n want %s (encoding/json)", name, got, want)
		}
	}
}

// BenchmarkStoredRequest: encoding a refresh token's stored request and
// decoding it again, as every rotation does once each.
//
//	go test ./authserver/internal/fositestore -run '^$' -bench StoredRequest
func BenchmarkStoredRequest(b *testing.B) {
	r := benchRequest()
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
