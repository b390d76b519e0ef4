package hostile

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

func TestOversizedMCPBodyAnswers413(t *testing.T) {
	x := newSys(t)
	big := toolsCall("search_bookable_business", map[string]any{"query": strings.Repeat("a", 2<<20)})
	st, _ := x.rawMCP(big, "Bearer "+x.agent.Token.AccessToken)
	if st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 2 MiB body to /mcp answered %d, want 413", st)
	}
	// Unauthenticated too: the limit applies before anything else.
	if st, _ := x.rawMCP(big); st != http.StatusRequestEntityTooLarge && st != http.StatusUnauthorized {
		t.Fatalf("a 2 MiB unauthenticated body answered %d", st)
	}
	x.alive()
}

func TestMalformedToolArguments(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) { malformedArguments(t, newSysOn(t, s)) })
}

func malformedArguments(t *testing.T, x *sys) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	// want is how the request is answered: "400" (refused before any
	// tool runs), "rpc_error" (a JSON-RPC error), a tool error code, or
	// "ok" — only where the decoder turned the input into a well-formed
	// value (invalid UTF-8 and a lone surrogate become U+FFFD).
	cases := []struct {
		name string
		body string
		want string
	}{
		{"deep JSON in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_bookable_business","arguments":{"query":` + deep + `}}}`, "400"},
		{"deep JSON as arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_bookable_business","arguments":` + deep + `}}`, "400"},
		{"deep objects", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_my_bookings","arguments":` + strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000) + `}}`, "400"},
		{"invalid UTF-8 in query", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_bookable_business\",\"arguments\":{\"query\":\"hair\xff\xfe\xc3cut\"}}}", "ok"},
		{"invalid UTF-8 in tool name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\xff\",\"arguments\":{}}}", "rpc_error"},
		{"lone surrogate escape", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_bookable_business","arguments":{"query":"\ud800x"}}}`, "ok"},
		{"huge query string", string(toolsCall("search_bookable_business", map[string]any{"query": strings.Repeat("é", 400000)})), "invalid_argument"},
		{"huge number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_bookable_business","arguments":{"query":"x","limit":1e999999}}}`, "invalid_argument"},
		{"negative offset", string(toolsCall("search_bookable_business", map[string]any{"query": "x", "offset": -1 << 62})), "invalid_argument"},
		{"wrong types", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_business_availability","arguments":{"business_reference":["a"],"local_date":{}}}}`, "invalid_argument"},
		{"duplicate keys", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_booking","arguments":{"booking_reference":"A","booking_reference":"B"}}}`, "booking_not_found"},
		{"batch", `[` + string(toolsCall("search_my_bookings", map[string]any{})) + `,` + string(toolsCall("search_my_bookings", map[string]any{})) + `]`, "400"},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_my_bo`, "400"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			st, body := x.rawMCP([]byte(c.body), "Bearer "+x.agent.Token.AccessToken)
			if st >= 500 || strings.Contains(body, "server_error") {
				t.Fatalf("answered %d %.300s", st, body)
			}
			if got := answerKind(st, body); got != c.want {
				t.Fatalf("answered %s (%d), want %s: %.300s", got, st, c.want, body)
			}
			t.Logf("%d in %s: %.160s", st, time.Since(start).Round(time.Millisecond), body)
		})
	}
	x.alive()
}

// answerKind classifies an answer to a raw tools/call: "400" and other
// statuses, "rpc_error", the tool error's code, or "ok".
func answerKind(status int, body string) string {
	if status != http.StatusOK {
		return fmt.Sprint(status)
	}
	var m struct {
		Error  *struct{ Code int } `json:"error"`
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error *struct{ Code string } `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return "not JSON"
	}
	switch {
	case m.Error != nil:
		return "rpc_error"
	case m.Result == nil:
		return "no result"
	case m.Result.IsError && m.Result.StructuredContent.Error != nil:
		return m.Result.StructuredContent.Error.Code
	case m.Result.IsError:
		return "isError without an error object"
	}
	return "ok"
}

func TestHugeAndLongFreeText(t *testing.T) {
	x := newSys(t)
	day := nextDay(4)
	slot := firstSlot(t, x, day)
	long := strings.Repeat("n", 501)
	cases := []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"create_my_booking", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
			"staff_reference": slot.staff, "starts_at": slot.at, "notes": long}, "notes"},
		{"create_my_booking", map[string]any{"business_reference": strings.Repeat("b", 100000), "service_reference": "svc-classic-haircut",
			"staff_reference": slot.staff, "starts_at": slot.at}, "business_reference"},
		{"create_my_booking", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
			"staff_reference": slot.staff, "starts_at": strings.Repeat("2026-01-01T10:00:00Z", 5000)}, "starts_at"},
		{"search_bookable_business", map[string]any{"query": strings.Repeat("q", 200000)}, "query"},
		{"cancel_my_booking", map[string]any{"booking_reference": "X", "grant": strings.Repeat("g", 300000), "reason": long}, ""},
		{"check_business_availability", map[string]any{"business_reference": strings.Repeat("z", 100000)}, ""},
	}
	for _, c := range cases {
		a := x.call(c.tool, c.args)
		t.Logf("%s with a huge %q: %s", c.tool, c.field, a.Kind)
		if a.Kind == "ok" || a.Kind == "server_error" || a.Status >= 500 || a.Kind == "transport" || a.Kind == "malformed" {
			t.Errorf("%s with a huge %q answered %s (%d)", c.tool, c.field, a.Kind, a.Status)
		}
	}
	x.alive()
}

type slotRef struct{ staff, at string }

// firstSlot finds an open slot of the demo barber on day or the days after.
func firstSlot(t *testing.T, x *sys, day string) slotRef {
	t.Helper()
	d, err := time.Parse("2006-01-02", day)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 14; i++ {
		if s, ok := slotOn(t, x, d.AddDate(0, 0, i).Format("2006-01-02")); ok {
			return s
		}
	}
	t.Fatalf("no open slot in the 14 days from %s", day)
	return slotRef{}
}

func slotOn(t *testing.T, x *sys, day string) (slotRef, bool) {
	a := x.call("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers",
		"service_reference": "svc-classic-haircut", "local_date": day})
	if a.Kind != "ok" {
		t.Fatalf("availability: %s", a.Kind)
	}
	b, _ := json.Marshal(a.Result)
	var wrap struct {
		Availability struct {
			Staff []struct {
				StaffReference string `json:"staff_reference"`
				Slots          []struct {
					StartsAt string `json:"starts_at"`
				} `json:"slots"`
			} `json:"staff"`
		} `json:"availability"`
	}
	json.Unmarshal(b, &wrap)
	for _, s := range wrap.Availability.Staff {
		for _, sl := range s.Slots {
			return slotRef{s.StaffReference, sl.StartsAt}, true
		}
	}
	var av struct {
		Staff []struct {
			StaffReference string `json:"staff_reference"`
			Slots          []struct {
				StartsAt string `json:"starts_at"`
			} `json:"slots"`
		} `json:"staff"`
		Slots []struct {
			StartsAt       string `json:"starts_at"`
			StaffReference string `json:"staff_reference"`
		} `json:"slots"`
	}
	json.Unmarshal(b, &av)
	for _, s := range av.Staff {
		for _, sl := range s.Slots {
			return slotRef{s.StaffReference, sl.StartsAt}, true
		}
	}
	for _, sl := range av.Slots {
		return slotRef{sl.StaffReference, sl.StartsAt}, true
	}
	return slotRef{}, false
}

func TestAuthorizationHeaderSmuggling(t *testing.T) {
	x := newSys(t)
	tok := x.agent.Token.AccessToken
	body := toolsCall("search_my_bookings", map[string]any{})
	cases := []struct {
		name string
		hdr  []string
		want []int // acceptable statuses
	}{
		{"valid", []string{"Bearer " + tok}, []int{200}},
		{"lowercase scheme (RFC 7235: case-insensitive)", []string{"bearer " + tok}, []int{200}},
		{"two spaces (RFC 6750: 1*SP)", []string{"Bearer  " + tok}, []int{200, 401}},
		{"trailing garbage", []string{"Bearer " + tok + " extra"}, []int{401}},
		{"Basic scheme", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("demo-mcp-client:x"))}, []int{401}},
		{"scheme only", []string{"Bearer"}, []int{401}},
		{"empty token", []string{"Bearer "}, []int{401}},
		{"token in quotes", []string{`Bearer "` + tok + `"`}, []int{401}},
		{"two headers, junk first", []string{"Bearer junk", "Bearer " + tok}, []int{400, 401}},
		{"two headers, valid first", []string{"Bearer " + tok, "Bearer junk"}, []int{400, 401}},
		{"two schemes in one header", []string{"Bearer " + tok + ", Basic eA=="}, []int{400, 401}},
		{"tab separator", []string{"Bearer\t" + tok}, []int{200, 401}},
	}
	var findings []string
	for _, c := range cases {
		st, b := x.rawMCP(body, c.hdr...)
		ok := false
		for _, w := range c.want {
			ok = ok || st == w
		}
		t.Logf("%-45s → %d", c.name, st)
		if st >= 500 {
			t.Errorf("%s: %d %.200s", c.name, st, b)
		} else if !ok {
			findings = append(findings, fmt.Sprintf("%s answered %d (want %v)", c.name, st, c.want))
		}
	}
	// CR/LF and obsolete line folding can only be sent on a raw connection.
	for _, raw := range []string{
		"Authorization: Bearer " + tok + "\r\nAuthorization: Bearer junk\r\n",
		"Authorization: Bearer junk\r\n " + tok + "\r\n", // obs-fold
		"Authorization: Bearer " + tok + "\rX-Injected: 1\r\n",
		"Authorization: Bearer \x00" + tok + "\r\n",
	} {
		st := rawHTTP(t, x.rs.Listener.Addr().String(), body, raw)
		t.Logf("raw %q… → %d", raw[:min(len(raw), 40)], st)
		if st == 200 || st >= 500 || st == 0 {
			findings = append(findings, fmt.Sprintf("raw header %q answered %d", strings.ReplaceAll(raw[:min(len(raw), 40)], tok, "<token>"), st))
		}
	}
	// The authorization server's /userinfo applies the same rule.
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, x.as.URL+"/userinfo", nil)
		for _, a := range c.hdr {
			req.Header.Add("Authorization", a)
		}
		resp, err := x.agent.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ok := false
		for _, w := range c.want {
			ok = ok || resp.StatusCode == w
		}
		if resp.StatusCode >= 500 || !ok {
			findings = append(findings, fmt.Sprintf("/userinfo %s answered %d (want %v)", c.name, resp.StatusCode, c.want))
		}
	}
	x.alive()
	if len(findings) > 0 {
		t.Errorf("resource server Authorization parsing (internal/authheader): %s", strings.Join(findings, "; "))
	}
}

// rawHTTP writes one request by hand with extra header lines and returns
// the status (0 when the connection was closed without one).
func rawHTTP(t *testing.T, addr string, body []byte, headers string) int {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n%s\r\n%s",
		addr, len(body), headers, body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func b64j(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestForgedTokens(t *testing.T) {
	x := newSys(t)
	claims := x.claims()
	claims["exp"] = time.Now().Add(10 * time.Minute).Unix()
	// The published key.
	resp, err := http.Get(x.as.URL + "/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	if len(set.Keys) == 0 {
		t.Fatal("empty JWKS")
	}
	pub := set.Keys[0]
	kid := pub.KeyID
	pubJSON, _ := pub.MarshalJSON()
	der, _ := x509.MarshalPKIXPublicKey(pub.Key)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs := func(key []byte, hdr map[string]any) string {
		in := b64j(hdr) + "." + b64j(claims)
		m := hmac.New(sha256.New, key)
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	foreign, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	es := func(hdr map[string]any) string {
		opts := (&jose.SignerOptions{}).WithType("at+jwt")
		for k, v := range hdr {
			opts = opts.WithHeader(jose.HeaderKey(k), v)
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: foreign}, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(claims)
		j, err := s.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := j.CompactSerialize()
		return out
	}
	foreignJWK, _ := json.Marshal(jose.JSONWebKey{Key: &foreign.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
	var jwkHdr map[string]any
	json.Unmarshal(foreignJWK, &jwkHdr)
	real := strings.Split(x.agent.Token.AccessToken, ".")
	cases := map[string]string{
		"alg none":                         b64j(map[string]any{"alg": "none", "typ": "at+jwt", "kid": kid}) + "." + b64j(claims) + ".",
		"alg None, real signature":         b64j(map[string]any{"alg": "None", "typ": "at+jwt", "kid": kid}) + "." + real[1] + "." + real[2],
		"HS256 keyed with the JWK JSON":    hs(pubJSON, map[string]any{"alg": "HS256", "typ": "at+jwt", "kid": kid}),
		"HS256 keyed with the PEM key":     hs(pemBytes, map[string]any{"alg": "HS256", "typ": "at+jwt", "kid": kid}),
		"HS256 keyed with the DER key":     hs(der, map[string]any{"alg": "HS256", "typ": "at+jwt", "kid": kid}),
		"foreign ES256 key, real kid":      es(map[string]any{"kid": kid}),
		"foreign key, unknown kid":         es(map[string]any{"kid": "attacker-kid"}),
		"foreign key, no kid":              es(nil),
		"foreign key, kid path traversal":  es(map[string]any{"kid": "../../../../etc/passwd"}),
		"foreign key, kid SQL":             es(map[string]any{"kid": "' OR '1'='1"}),
		"foreign key embedded as jwk":      es(map[string]any{"kid": kid, "jwk": jwkHdr}),
		"foreign key fetched from jku":     es(map[string]any{"kid": kid, "jku": "http://127.0.0.1:1/jwks.json"}),
		"real header, tampered claims":     real[0] + "." + b64j(map[string]any{"sub": "someone-else", "aud": claims["aud"], "iss": claims["iss"]}) + "." + real[2],
		"real token, signature stripped":   real[0] + "." + real[1] + ".",
		"real token, four parts":           x.agent.Token.AccessToken + ".e30",
		"real token, JSON serialization":   `{"payload":"` + real[1] + `","protected":"` + real[0] + `","signature":"` + real[2] + `"}`,
		"real token, padding added":        real[0] + "." + real[1] + "==." + real[2],
		"real token, whitespace inside":    real[0] + ". " + real[1] + "." + real[2],
		"huge token":                       strings.Repeat("A", 200000),
		"empty segments":                   "..",
		"id token typ (JWT), foreign kid ": es(map[string]any{"kid": kid, "typ": "JWT"}),
	}
	before := x.call("search_my_bookings", map[string]any{})
	if before.Kind != "ok" {
		t.Fatalf("real token refused: %s", before.Kind)
	}
	for name, tok := range cases {
		a := x.callWith(tok)
		if a.Status != http.StatusUnauthorized {
			t.Errorf("%s: answered %d %s, want 401", name, a.Status, a.Kind)
		}
	}
	x.alive()
}

func (x *sys) callWith(token string) struct {
	Status int
	Kind   string
} {
	st, body := x.rawMCP(toolsCall("search_my_bookings", map[string]any{}), "Bearer "+token)
	k := "ok"
	if st != 200 {
		k = fmt.Sprintf("http_%d", st)
	} else if strings.Contains(body, `"isError":true`) {
		k = "tool_error"
	}
	return struct {
		Status int
		Kind   string
	}{st, k}
}

// TestKeyPurposeConfusion presents tokens signed by the right server with
// the wrong key or for the wrong purpose: an access token signed with the
// booking-grant key, the ID token, a booking grant as an access token, and
// an access token as a booking grant.
func TestKeyPurposeConfusion(t *testing.T) {
	x := newSys(t)
	ctx := x.ctx
	gk := keys.NewManager(x.store, []byte(secret), store.KeyPurposeGrant, nil)
	if err := gk.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	sk, err := gk.SigningKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claims := x.claims()
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, _ := signer.Sign(b)
	withGrantKey, _ := jws.CompactSerialize()
	if a := x.callWith(withGrantKey); a.Status != http.StatusUnauthorized {
		t.Errorf("an access token signed with the booking-grant key answered %d", a.Status)
	}
	if idt, _ := x.agent.Token.Extra("id_token").(string); idt != "" {
		if a := x.callWith(idt); a.Status != http.StatusUnauthorized {
			t.Errorf("the ID token as an access token answered %d", a.Status)
		}
	} else {
		t.Log("no ID token issued (openid not granted by default)")
	}
	// A real booking and its grant.
	slot := firstSlot(t, x, nextDay(6))
	args := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
		"staff_reference": slot.staff, "starts_at": slot.at}
	sum := x.call("create_my_booking", args)
	args = testkit.ConfirmedArgs(args, testkit.FindString(sum.Result, "confirmed_summary"), "purpose-confusion-key-01", "yes")
	created := x.call("create_my_booking", args)
	if created.Kind != "ok" {
		t.Fatalf("create: %s", created.Kind)
	}
	ref, grant := testkit.FindString(created.Result, "booking_reference"), testkit.FindString(created.Result, "grant")
	if a := x.callWith(grant); a.Status != http.StatusUnauthorized {
		t.Errorf("a booking grant as an access token answered %d", a.Status)
	}
	for name, g := range map[string]string{"the access token": x.agent.Token.AccessToken, "grant-key-signed access token": withGrantKey} {
		a := x.call("cancel_my_booking", map[string]any{"booking_reference": ref, "grant": g})
		if a.Kind != "invalid_grant" {
			t.Errorf("%s as a booking grant answered %s, want invalid_grant", name, a.Kind)
		}
	}
	x.alive()
}
