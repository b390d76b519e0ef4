package fositestore

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
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

// storedCases are stored requests for the format tests: a full refresh
// session, one with nothing optional set, and one whose strings need
// escaping (HTML characters, quotes, control and non-ASCII characters, a
// URL client) and whose extras nest.
func storedCases() map[string]*fosite.Request {
	full := benchRequest()
	bare := &fosite.Request{ID: "req-1", Client: &fosite.DefaultClient{ID: "app"}, Form: url.Values{}, Session: &Session{}}
	odd := benchRequest()
	odd.Client = &fosite.DefaultClient{ID: "https://app.example/client.json?a=1&b=<2>"}
	odd.Form = url.Values{"client_id": {"https://app.example/client.json?a=1&b=<2>"}, "state": {"\"quoted\"\u2028\x01 ünïcödé"}}
	sess := odd.Session.(*Session)
	sess.Extra = map[string]any{"n": 1.5, "big": 1e21, "list": []any{"x", 2, nil, true}, "m": map[string]any{"z": 1, "a": "<&>"}}
	sess.IDClaims.Extra = map[string]any{"email": "ana+test@example.com", "amr": []string{"pwd"}}
	sess.IDHeaders = nil
	return map[string]*fosite.Request{"full": full, "bare": bare, "escaped": odd}
}

// Encode writes exactly what encoding/json writes for the stored form, so
// the stored format does not depend on which encoder wrote a row.
func TestEncodeAsEncodingJSON(t *testing.T) {
	for name, r := range storedCases() {
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

// decodeStored gives what encoding/json gives for every stored form, into
// an empty session and into one that already holds values (fosite sets
// expiries on a session between two reads of the same code, and the
// second read merges into it), and refuses what encoding/json refuses.
func TestDecodeAsEncodingJSON(t *testing.T) {
	held := func() *Session {
		return &Session{Subject: "before", ExpiresAt: map[fosite.TokenType]time.Time{fosite.AccessToken: time.Unix(5, 0).UTC(), "other": time.Unix(7, 0).UTC()},
			Extra: map[string]any{"kept": "yes"}}
	}
	for name, r := range storedCases() {
		raw, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		for into, fresh := range map[string]func() *Session{"empty": func() *Session { return &Session{} }, "held": held} {
			got, want := storedRequest{Session: fresh()}, storedRequest{Session: fresh()}
			if err := decodeStored(raw, &got); err != nil {
				t.Fatalf("%s into %s: %v", name, into, err)
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got.Session, want.Session) {
				t.Errorf("%s into %s:\n got  %#v %#v\n want %#v %#v (encoding/json)", name, into, got, got.Session, want, want.Session)
			}
		}
	}
	for _, raw := range []string{``, `{`, `{"id":1}`, `{"session":{"auth_time":"yesterday"}}`, `[]`} {
		sr := storedRequest{Session: &Session{}}
		if err := decodeStored([]byte(raw), &sr); (err == nil) != (json.Unmarshal([]byte(raw), &storedRequest{Session: &Session{}}) == nil) {
			t.Errorf("%q: decodeStored error %v, encoding/json disagrees", raw, err)
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
			if err := decodeStored(raw, &sr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
