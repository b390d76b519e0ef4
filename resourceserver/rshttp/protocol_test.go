package rshttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

func TestMetadata(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(e.rs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		var md map[string]any
		if err := json.Unmarshal([]byte(body), &md); err != nil {
			t.Fatal(err)
		}
		if md["resource"] != e.resource {
			t.Errorf("%s: resource = %v, want %q byte for byte", path, md["resource"], e.resource)
		}
		if got := prettyJSON(md["authorization_servers"]); got != prettyJSON([]string{e.issuer.URL}) {
			t.Errorf("authorization_servers = %s", got)
		}
		if got := prettyJSON(md["scopes_supported"]); got != prettyJSON([]string{"openid"}) {
			t.Errorf("scopes_supported = %s", got)
		}
		if got := prettyJSON(md["bearer_methods_supported"]); got != prettyJSON([]string{"header"}) {
			t.Errorf("bearer_methods_supported = %s", got)
		}
	}
}

func TestMethodsOtherThanPOST(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(m, e.resource, nil)
		req.Header.Set("Authorization", "Bearer "+e.token(nil))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s /mcp: %d Allow=%q, want 405 Allow=POST", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

func TestOrigin(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(nil)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{"https://evil.example", 403},
		{"http://attacker.localhost.evil.example", 403},
		{"null", 403},
		{"https://app.example.com", 200},              // configured
		{strings.TrimSuffix(e.resource, "/mcp"), 200}, // our own origin
		{"http://localhost:6274", 200},                // loopback resource: loopback origins
		{"http://127.0.0.1:9999", 200},
	} {
		hdr := map[string]string{}
		if tc.origin != "" {
			hdr["Origin"] = tc.origin
		}
		resp := e.rpc(tok, toolsList, hdr)
		body := readBody(t, resp)
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %q: %d %s, want %d", tc.origin, resp.StatusCode, body, tc.want)
		}
		if tc.want == 200 && tc.origin != "" && resp.Header.Get("Access-Control-Allow-Origin") != tc.origin {
			t.Errorf("Origin %q: no CORS allow header", tc.origin)
		}
	}
	// A browser client reads the 401 challenge: docs/reference.md §10 exposes
	// WWW-Authenticate.
	resp := e.rpc("", toolsList, map[string]string{"Origin": "http://localhost:6274"})
	readBody(t, resp)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("401 to a browser: %d %v", resp.StatusCode, resp.Header)
	}
	// DNS rebinding: a loopback resource refuses a foreign Host.
	req, _ := http.NewRequest(http.MethodPost, e.resource, strings.NewReader(toolsList))
	req.Host = "rebound.example.com"
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	if resp.StatusCode != 403 {
		t.Errorf("foreign Host on a loopback resource: %d, want 403", resp.StatusCode)
	}
}

func TestBatchRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp := e.rpc(e.token(nil), "  ["+toolsList+"]", nil)
	body := readBody(t, resp)
	if resp.StatusCode != 400 {
		t.Fatalf("batch: %d %s, want 400", resp.StatusCode, body)
	}
	var m struct {
		JSONRPC string             `json:"jsonrpc"`
		Error   struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.JSONRPC != "2.0" || m.Error.Code != -32600 {
		t.Errorf("batch answer is not a JSON-RPC invalid-request error: %s", body)
	}
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t, envOpts{})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	resp := e.rpc(e.token(nil), big, nil)
	readBody(t, resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: %d, want 413", resp.StatusCode)
	}
}

func TestChallenges(t *testing.T) {
	e := newEnv(t, envOpts{})
	md := strings.TrimSuffix(e.resource, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	resp := e.rpc("", toolsList, nil)
	readBody(t, resp)
	if want := `Bearer resource_metadata="` + md + `", scope="openid"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp = e.rpc("not-a-jwt", toolsList, nil)
	readBody(t, resp)
	wa := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != 401 || !strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, `resource_metadata="`+md+`"`) || !strings.Contains(wa, `scope="openid"`) {
		t.Errorf("bad token: %d %q", resp.StatusCode, wa)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on a 401")
	}
}

func TestTokenVerification(t *testing.T) {
	e := newEnv(t, envOpts{})
	sk, err := e.keys.SigningKey(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	disabled, _ := e.store.UpsertLink(e.ctx, e.other.ID, e.client.ID, []string{scope.BookingsRead}, e.clock.Now())
	for _, tc := range []struct {
		name  string
		token func() string
		ok    bool
	}{
		{"valid", func() string { return e.token(nil) }, true},
		{"wrong audience", func() string {
			return e.token(func(c *tokenClaims) { c.Aud = []string{"http://127.0.0.1:9/other"} })
		}, false},
		{"audience among several", func() string {
			return e.token(func(c *tokenClaims) { c.Aud = []string{"http://elsewhere/x", e.resource} })
		}, true},
		{"audience with trailing slash", func() string {
			return e.token(func(c *tokenClaims) { c.Aud = []string{e.resource + "/"} })
		}, false},
		{"wrong issuer", func() string { return e.token(func(c *tokenClaims) { c.Iss = "http://127.0.0.1:1" }) }, false},
		{"expired 31 s ago", func() string {
			return e.token(func(c *tokenClaims) { c.Exp = e.clock.Now().Add(-31 * time.Second).Unix() })
		}, false},
		{"expired 6 s ago (past the 5 s skew)", func() string {
			return e.token(func(c *tokenClaims) { c.Exp = e.clock.Now().Add(-6 * time.Second).Unix() })
		}, false},
		{"expired 4 s ago (inside the skew)", func() string {
			return e.token(func(c *tokenClaims) { c.Exp = e.clock.Now().Add(-4 * time.Second).Unix() })
		}, true},
		{"typ JWT (an ID token)", func() string { return e.sign(sk, "JWT", nil) }, false},
		{"unknown key", func() string { return e.sign(foreignKey(t, "kid-nobody-published"), "at+jwt", nil) }, false},
		{"known kid, foreign key", func() string {
			k := foreignKey(t, sk.Key.(jose.JSONWebKey).KeyID)
			return e.sign(k, "at+jwt", nil)
		}, false},
		{"alg none", func() string {
			c := e.defaultClaims()
			b, _ := json.Marshal(c)
			return b64(`{"alg":"none","typ":"at+jwt"}`) + "." + b64(string(b)) + "."
		}, false},
		{"alg HS256", func() string {
			c := e.defaultClaims()
			b, _ := json.Marshal(c)
			return b64(`{"alg":"HS256","typ":"at+jwt","kid":"`+sk.Key.(jose.JSONWebKey).KeyID+`"}`) + "." + b64(string(b)) + ".c2ln"
		}, false},
		{"no link_id", func() string { return e.token(func(c *tokenClaims) { c.LinkID = "" }) }, false},
		{"unknown link", func() string { return e.token(func(c *tokenClaims) { c.LinkID = "lnk_missing" }) }, false},
		{"link of another account", func() string { return e.token(func(c *tokenClaims) { c.LinkID = disabled.ID }) }, false},
		{"client_id not the link's", func() string { return e.token(func(c *tokenClaims) { c.ClientID = "other-client" }) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.rpc(tc.token(), toolsList, nil)
			body := readBody(t, resp)
			if tc.ok && resp.StatusCode != 200 {
				t.Fatalf("refused: %d %s %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
			if !tc.ok && (resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)) {
				t.Fatalf("accepted or wrong answer: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestDisconnectedLinkRefusedWithin5s(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(nil)
	if resp := e.rpc(tok, toolsList, nil); resp.StatusCode != 200 {
		t.Fatalf("before: %d %s", resp.StatusCode, readBody(t, resp))
	}
	if err := e.store.RevokeLink(e.ctx, e.link.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(4 * time.Second)
	resp := e.rpc(tok, toolsList, nil)
	readBody(t, resp)
	if resp.StatusCode != 401 {
		t.Fatalf("4 s after disconnecting: %d, want 401", resp.StatusCode)
	}
}

func TestDisabledClientRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	if _, err := e.store.UpdateClient(e.ctx, e.client.ID, func(c store.Client) (store.Client, error) { c.Disabled = true; return c, nil }); err != nil {
		t.Fatal(err)
	}
	resp := e.rpc(e.token(nil), toolsList, nil)
	readBody(t, resp)
	if resp.StatusCode != 401 {
		t.Fatalf("disabled client: %d, want 401", resp.StatusCode)
	}
}

// TestExpirySkewOnACachedToken: a token that verified once is still
// refused once it is more than 5 s past its exp.
func TestExpirySkewOnACachedToken(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(func(c *tokenClaims) { c.Exp = e.clock.Now().Add(10 * time.Second).Unix() })
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{0, 200}, {14 * time.Second, 200}, {2 * time.Second, 401}} {
		e.clock.Advance(step.advance)
		resp := e.rpc(tok, toolsList, nil)
		readBody(t, resp)
		if resp.StatusCode != step.want {
			t.Fatalf("%s past exp: %d, want %d", e.clock.Now().Sub(epoch.Add(10*time.Second)), resp.StatusCode, step.want)
		}
	}
}

func TestRotatedKey(t *testing.T) {
	e := newEnv(t, envOpts{})
	old := e.token(nil)
	if resp := e.rpc(old, toolsList, nil); resp.StatusCode != 200 {
		t.Fatalf("old key before rotation: %d", resp.StatusCode)
	}
	if _, err := e.keys.Rotate(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Second)
	fresh := e.token(nil) // signed by the new key: an unknown kid, fetched once
	for name, tok := range map[string]string{"new key": fresh, "previous key": old} {
		resp := e.rpc(tok, toolsList, nil)
		body := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Errorf("%s after rotation: %d %s", name, resp.StatusCode, body)
		}
	}
	// The previous key's token stays valid until its own expiry, not after.
	e.clock.Advance(15*time.Minute + 31*time.Second)
	resp := e.rpc(old, toolsList, nil)
	readBody(t, resp)
	if resp.StatusCode != 401 {
		t.Errorf("previous key's token after expiry: %d, want 401", resp.StatusCode)
	}
}

func TestUnknownKidsDoNotHammerTheJWKS(t *testing.T) {
	e := newEnv(t, envOpts{})
	if resp := e.rpc(e.token(nil), toolsList, nil); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	before := e.jwksHits.Load()
	for i := 0; i < 20; i++ {
		resp := e.rpc(e.sign(foreignKey(t, "forged-"+store.RandomString(4)), "at+jwt", nil), toolsList, nil)
		readBody(t, resp)
		if resp.StatusCode != 401 {
			t.Fatalf("forged kid accepted: %d", resp.StatusCode)
		}
	}
	if n := e.jwksHits.Load() - before; n > 3 {
		t.Errorf("20 forged kids within one second caused %d JWKS fetches, want ≤ 3", n)
	}
}

func TestStepUpChallengePerTool(t *testing.T) {
	e := newEnv(t, envOpts{linkScopes: []string{scope.OpenID, scope.BookingsRead}})
	tok := e.token(func(c *tokenClaims) { c.Scope = "openid bookings:read" })
	// tools/list shows every tool.
	resp := e.rpc(tok, toolsList, nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, "search_bookable_business") {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	// Reading is allowed.
	resp = e.rpc(tok, toolCall("search_bookable_business", map[string]any{"query": "hair"}), nil)
	if body := readBody(t, resp); resp.StatusCode != 200 {
		t.Fatalf("read tool: %d %s", resp.StatusCode, body)
	}
	// Writing asks to step up.
	resp = e.rpc(tok, toolCall("create_my_booking", map[string]any{}), nil)
	readBody(t, resp)
	md := strings.TrimSuffix(e.resource, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	wa := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != 403 || !strings.HasPrefix(wa, `Bearer error="insufficient_scope"`) ||
		!strings.Contains(wa, `scope="openid bookings:write"`) || !strings.Contains(wa, `resource_metadata="`+md+`"`) {
		t.Fatalf("write tool with a read-only token: %d %q", resp.StatusCode, wa)
	}
	// A token with bookings:write whose link was narrowed to read only
	// is narrowed too.
	wide := e.token(nil)
	resp = e.rpc(wide, toolCall("cancel_my_booking", map[string]any{}), nil)
	readBody(t, resp)
	if resp.StatusCode != 403 {
		t.Fatalf("write scope beyond the link: %d, want 403", resp.StatusCode)
	}
	// A token without bookings:read cannot read.
	none := e.token(func(c *tokenClaims) { c.Scope = "openid" })
	resp = e.rpc(none, toolCall("get_my_booking", map[string]any{"booking_reference": "x"}), nil)
	readBody(t, resp)
	if resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="openid bookings:read"`) {
		t.Fatalf("read tool without bookings:read: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestProtocolVersions(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(nil)
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			cs := e.session(tok, v)
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Errorf("negotiated %q, want %q", got, v)
			}
			tl, err := cs.ListTools(e.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			requireReadTools(t, tl.Tools)
			res, err := cs.CallTool(e.ctx, &mcp.CallToolParams{Name: "search_my_bookings", Arguments: map[string]any{"status": "bogus"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(prettyJSON(res.StructuredContent), `"field": "status"`) {
				t.Errorf("call: %s", prettyJSON(res))
			}
		})
	}
}

func TestRequestIDs(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp := e.rpc(e.token(nil), toolsList, map[string]string{"X-Request-Id": "trace-123"})
	readBody(t, resp)
	if resp.Header.Get("X-Request-Id") != "trace-123" {
		t.Errorf("incoming id not kept: %q", resp.Header.Get("X-Request-Id"))
	}
	resp = e.rpc(e.token(nil), toolsList, map[string]string{"X-Request-Id": "bad id with spaces"})
	readBody(t, resp)
	if id := resp.Header.Get("X-Request-Id"); id == "" || strings.Contains(id, " ") {
		t.Errorf("invalid incoming id not replaced: %q", id)
	}
}

func TestPerLinkRateLimit(t *testing.T) {
	e := newEnv(t, envOpts{perLink: &rshttp.Limit{PerSecond: 1, Burst: 2}})
	tok := e.token(nil)
	var last map[string]any
	for i := 0; i < 3; i++ {
		resp := e.rpc(tok, toolCall("search_my_bookings", map[string]any{"status": "bogus"}), nil)
		body := readBody(t, resp)
		var m struct {
			Result map[string]any `json:"result"`
		}
		json.Unmarshal([]byte(body), &m)
		last = m.Result
	}
	sc, _ := last["structuredContent"].(map[string]any)
	er, _ := sc["error"].(map[string]any)
	if er["code"] != "rate_limited" || er["retry_after_sec"].(float64) < 1 || last["isError"] != true {
		t.Fatalf("third call in a second: %s", prettyJSON(last))
	}
}

func TestArgumentErrors(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(nil)
	for _, tc := range []struct {
		tool        string
		args        any
		code, field string
	}{
		{"search_bookable_business", map[string]any{}, "invalid_argument", "query"},
		{"search_bookable_business", map[string]any{"query": "   "}, "invalid_argument", "query"},
		{"search_bookable_business", map[string]any{"query": "hair", "limit": "ten"}, "invalid_argument", "limit"},
		{"search_bookable_business", map[string]any{"query": "hair", "limit": 51}, "invalid_argument", "limit"},
		{"search_bookable_business", map[string]any{"query": "hair", "limit": 0}, "invalid_argument", "limit"},
		{"search_bookable_business", map[string]any{"query": "hair", "offset": -1}, "invalid_argument", "offset"},
		{"search_bookable_business", map[string]any{"query": "hair", "colour": "red"}, "invalid_argument", "colour"},
		{"check_business_availability", map[string]any{}, "invalid_argument", "business_reference"},
		{"check_business_availability", map[string]any{"business_reference": "b", "service_reference": "s"}, "invalid_argument", "local_date"},
		{"check_business_availability", map[string]any{"business_reference": "b", "local_date": "2026-03-03"}, "invalid_argument", "service_reference"},
		{"check_business_availability", map[string]any{"business_reference": "b", "service_reference": "s", "local_date": "tomorrow"}, "invalid_time", "local_date"},
		{"check_business_availability", map[string]any{"business_reference": "b", "service_reference": "s", "local_date": "2026-02-30"}, "invalid_time", "local_date"},
		{"search_my_bookings", map[string]any{"status": "soon"}, "invalid_argument", "status"},
		{"get_my_booking", map[string]any{}, "invalid_argument", "booking_reference"},
		{"get_my_booking", map[string]any{"booking_reference": 12}, "invalid_argument", "booking_reference"},
		{"check_my_booking_availability", map[string]any{"booking_reference": "x", "local_date": "next friday"}, "invalid_time", "local_date"},
	} {
		name := tc.tool + " " + prettyJSON(tc.args)
		resp := e.rpc(tok, toolCall(tc.tool, tc.args), nil)
		body := readBody(t, resp)
		var m struct {
			Result struct {
				IsError           bool `json:"isError"`
				StructuredContent struct {
					Error struct{ Code, Field, Message string } `json:"error"`
				} `json:"structuredContent"`
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: %v %s", name, err, body)
		}
		r := m.Result
		if !r.IsError || r.StructuredContent.Error.Code != tc.code || r.StructuredContent.Error.Field != tc.field || r.StructuredContent.Error.Message == "" {
			t.Errorf("%s: got %s", name, body)
		}
		if len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, `"code":"`+tc.code+`"`) {
			t.Errorf("%s: text content does not repeat the structured error: %s", name, body)
		}
	}
}

func TestAnotherPersonsBookingIsNotFound(t *testing.T) {
	e := newEnv(t, envOpts{})
	cats := booking.DemoCatalogs(e.clock.Now())
	cat, err := e.store.LoadCatalog(e.ctx, cats[0].Business.Reference)
	if err != nil {
		t.Fatal(err)
	}
	svc, staff := cat.Services[0], cat.Staff[0]
	start := e.clock.Now().Add(72 * time.Hour)
	b := store.Booking{ID: store.NewID("bkg"), Reference: "LSOTHER1", BusinessID: cat.Business.ID, ServiceID: svc.ID, StaffID: staff.ID,
		AccountID: e.other.ID, StartsAt: start, EndsAt: start.Add(time.Duration(svc.DurationMinutes) * time.Minute),
		BlockStart: start, BlockEnd: start.Add(time.Duration(svc.DurationMinutes) * time.Minute), Status: store.BookingConfirmed,
		Version: 1, PaymentState: store.PaymentNone, Currency: svc.Currency, CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	if err := e.store.InsertBooking(e.ctx, b); err != nil {
		t.Fatal(err)
	}
	tok := e.token(nil)
	errorOf := func(ref string) string {
		resp := e.rpc(tok, toolCall("get_my_booking", map[string]any{"booking_reference": ref}), nil)
		var m struct {
			Result struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		json.Unmarshal([]byte(readBody(t, resp)), &m)
		return string(m.Result.StructuredContent)
	}
	theirs, missing := errorOf("LSOTHER1"), errorOf("LSMISSING")
	if !strings.Contains(theirs, `"booking_not_found"`) || strings.ReplaceAll(theirs, "LSOTHER1", "REF") != strings.ReplaceAll(missing, "LSMISSING", "REF") {
		t.Fatalf("another person's booking is distinguishable:\n%s\n%s", theirs, missing)
	}
}

func TestPerAddressRateLimit(t *testing.T) {
	e := newEnv(t, envOpts{})
	// Rebuild with a tiny per-address limit.
	h, err := rshttp.New(e.ctx, rshttp.Deps{Store: e.store, Config: config.Config{Issuer: e.issuer.URL, Resource: e.resource, SecretKey: []byte(testSecret)},
		Clock: e.clock.Now, PerAddress: &rshttp.Limit{PerSecond: 1, Burst: 1}})
	if err != nil {
		t.Fatal(err)
	}
	e.rs.Config.Handler = h
	tok := e.token(nil)
	first := e.rpc(tok, toolsList, nil)
	readBody(t, first)
	second := e.rpc(tok, toolsList, nil)
	body := readBody(t, second)
	if first.StatusCode != 200 || second.StatusCode != 429 || second.Header.Get("Retry-After") == "" || !strings.Contains(body, `"retry_after_sec"`) {
		t.Fatalf("per-address limit: %d then %d %q %s", first.StatusCode, second.StatusCode, second.Header.Get("Retry-After"), body)
	}
}

// TestNeedsSecretKey: without a secret key there are no grant signing
// keys, so the server refuses to start instead of serving without its
// mutation tools.
func TestNeedsSecretKey(t *testing.T) {
	e := newEnv(t, envOpts{})
	_, err := rshttp.New(e.ctx, rshttp.Deps{Store: e.store, Config: config.Config{Issuer: e.issuer.URL, Resource: e.resource}})
	if err == nil || !strings.Contains(err.Error(), "SecretKey") {
		t.Fatalf("rshttp.New without a secret key: %v", err)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(e.rs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
}

// TestBehindReverseProxy: a public https resource served by a loopback
// listener (the proxy forwards the public Host) works; the SDK's localhost
// Host check would have refused it.
func TestBehindReverseProxy(t *testing.T) {
	e := newEnv(t, envOpts{resource: "https://mcp.linkslot.example/mcp"})
	req, _ := http.NewRequest(http.MethodPost, e.rs.URL+"/mcp", strings.NewReader(toolsList))
	req.Host = "mcp.linkslot.example"
	req.Header.Set("Authorization", "Bearer "+e.token(nil))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "https://mcp.linkslot.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("proxied request: %d %s", resp.StatusCode, body)
	}
	md, err := httpGet(e.rs.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil || !strings.Contains(md, `"resource": "https://mcp.linkslot.example/mcp"`) {
		t.Fatalf("metadata behind the proxy: %v %s", err, md)
	}
	// Loopback origins are not trusted for a public resource.
	req.Header.Set("Origin", "http://localhost:3000")
	req.Body = http.NoBody
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	if resp.StatusCode != 403 {
		t.Fatalf("loopback Origin on a public resource: %d, want 403", resp.StatusCode)
	}
}

func TestCORSPreflight(t *testing.T) {
	e := newEnv(t, envOpts{})
	for origin, want := range map[string]int{"https://app.example.com": 204, "https://evil.example": 403} {
		req, _ := http.NewRequest(http.MethodOptions, e.resource, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		if resp.StatusCode != want {
			t.Errorf("preflight from %s: %d, want %d", origin, resp.StatusCode, want)
		}
		if want == 204 && (resp.Header.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization")) {
			t.Errorf("preflight headers: %v", resp.Header)
		}
	}
}

// TestConcurrentCalls drives the caches (verified tokens, links, JWKS
// first sighting, rate limits) from 16 clients at once; run with -race.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, envOpts{})
	toks := []string{e.token(nil), e.token(nil), e.sign(foreignKey(t, "forged"), "at+jwt", nil)}
	var wg sync.WaitGroup
	errs := make(chan string, 16*12)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 12; i++ {
				tok := toks[(g+i)%len(toks)]
				resp := e.rpc(tok, toolCall("search_bookable_business", map[string]any{"query": "hair"}), nil)
				readBody(t, resp)
				forged := tok == toks[2]
				if (forged && resp.StatusCode != 401) || (!forged && resp.StatusCode != 200) {
					errs <- fmt.Sprintf("goroutine %d call %d: %d (forged=%v)", g, i, resp.StatusCode, forged)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// recordingDomain remembers the request id its context carried.
type recordingDomain struct {
	testkit.NoopDomain
	got chan string
}

func (d recordingDomain) SearchBusinesses(ctx context.Context, q, c string, l, o int) (booking.BusinessPage, error) {
	d.got <- requestid.From(ctx)
	return booking.BusinessPage{}, nil
}

func TestRequestIDReachesTheDomain(t *testing.T) {
	d := recordingDomain{got: make(chan string, 1)}
	e := newEnv(t, envOpts{domain: d})
	resp := e.rpc(e.token(nil), toolCall("search_bookable_business", map[string]any{"query": "x"}), map[string]string{"X-Request-Id": "req-abc-123"})
	readBody(t, resp)
	if got := <-d.got; got != "req-abc-123" {
		t.Fatalf("request id in the tool's context: %q", got)
	}
}

var readTools = []string{"search_bookable_business", "check_business_availability", "search_my_bookings", "get_my_booking", "check_my_booking_availability"}

// requireReadTools checks that tools/list shows the five read tools (the
// mutations, registered when their dependencies are set, may be there too).
func requireReadTools(t *testing.T, tools []*mcp.Tool) {
	t.Helper()
	have := map[string]bool{}
	for _, tl := range tools {
		have[tl.Name] = true
	}
	for _, n := range readTools {
		if !have[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}
}
