package rshttp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name.golden (or rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./resourceserver/... -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden transcript (if intended, rerun with -update):\n--- got ---\n%s", path, got)
	}
}

var grantRE = regexp.MustCompile(`"grant": "[^"]+"`)

// normalize removes what differs between runs: ports and signatures.
func (e *env) normalize(s string) string {
	s = strings.ReplaceAll(s, strings.TrimSuffix(e.resource, "/mcp"), "http://RS")
	s = strings.ReplaceAll(s, e.issuer.URL, "http://AS")
	return grantRE.ReplaceAllString(s, `"grant": "<grant: signed, changes every call>"`)
}

// transcript posts body and renders request and answer.
func (e *env) transcript(t *testing.T, token, body string) string {
	t.Helper()
	resp := e.rpc(token, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	raw := readBody(t, resp)
	e.checkTranscript(t, token, body, raw)
	var req, ans bytes.Buffer
	json.Indent(&req, []byte(body), "", "  ")
	if err := json.Indent(&ans, []byte(raw), "", "  "); err != nil {
		ans.WriteString(raw)
	}
	// The text content repeats the structured content as one JSON string;
	// show it indented too, so reviews read it once.
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) == nil {
		if r, ok := m["result"].(map[string]any); ok {
			if c, ok := r["content"].([]any); ok && len(c) == 1 {
				if tc, ok := c[0].(map[string]any); ok {
					if txt, ok := tc["text"].(string); ok && json.Valid([]byte(txt)) {
						var sc bytes.Buffer
						json.Indent(&sc, []byte(txt), "", "  ")
						tc["text"] = "<same JSON as structuredContent>"
						if !jsonEqual(txt, r["structuredContent"]) {
							tc["text"] = "<DIFFERS from structuredContent> " + txt
						}
						b, _ := json.MarshalIndent(m, "", "  ")
						ans.Reset()
						ans.Write(b)
					}
				}
			}
		}
	}
	return e.normalize(fmt.Sprintf("POST /mcp\n%s\n\nHTTP %d\n%s\n", req.String(), resp.StatusCode, ans.String()))
}

func jsonEqual(a string, b any) bool {
	var x any
	if json.Unmarshal([]byte(a), &x) != nil {
		return false
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(b)
	return bytes.Equal(bx, by)
}

// demoBooking gives the demo account one upcoming booking with a fixed
// reference.
func (e *env) demoBooking(t *testing.T) store.Booking {
	t.Helper()
	cat, err := e.store.LoadCatalog(e.ctx, "biz-brightcut-barbers")
	if err != nil {
		t.Fatal(err)
	}
	var svc store.Service
	for _, s := range cat.Services {
		if s.Reference == "svc-classic-haircut" {
			svc = s
		}
	}
	var staff store.Staff
	for _, s := range cat.Staff {
		if s.Reference == "stf-marcus-reid" {
			staff = s
		}
	}
	loc, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, time.March, 4, 10, 0, 0, 0, loc).UTC()
	end := start.Add(time.Duration(svc.DurationMinutes) * time.Minute)
	now := e.clock.Now()
	b := store.Booking{ID: store.NewID("bkg"), Reference: "LSDEMO0001", BusinessID: cat.Business.ID, ServiceID: svc.ID, StaffID: staff.ID,
		AccountID: e.account.ID, LinkID: e.link.ID, StartsAt: start, EndsAt: end,
		BlockStart: start.Add(-time.Duration(svc.BufferBeforeMinutes) * time.Minute), BlockEnd: end.Add(time.Duration(svc.BufferAfterMinutes) * time.Minute),
		Status: store.BookingConfirmed, Version: 1, PaymentState: store.PaymentNone, PriceCents: svc.PriceCents, Currency: svc.Currency,
		Notes: "Short on the sides, please.", CreatedAt: now, UpdatedAt: now}
	if err := e.store.InsertBooking(e.ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenTranscripts pins the answers on both backends: SQLite and
// PostgreSQL must answer byte for byte the same.
func TestGoldenTranscripts(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		goldenTranscripts(t, newEnv(t, envOpts{noLimits: true, store: s}))
	})
}

func goldenTranscripts(t *testing.T, e *env) {
	e.demoBooking(t)
	tok := e.token(nil)
	for _, tc := range []struct {
		name string
		body string
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"golden","version":"1.0.0"}}}`},
		{"tools_list", toolsList},
		{"search_bookable_business", toolCall("search_bookable_business", map[string]any{"query": "haircut"})},
		{"search_bookable_business_city_page", toolCall("search_bookable_business", map[string]any{"query": "massage", "city": "Sydney", "limit": 1})},
		{"search_bookable_business_invalid_limit", toolCall("search_bookable_business", map[string]any{"query": "haircut", "limit": "ten"})},
		{"check_business_availability_catalog", toolCall("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers"})},
		{"check_business_availability_slots", toolCall("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut", "local_date": "2026-03-04", "with_staff_reference": "stf-marcus-reid"})},
		{"check_business_availability_unknown_business", toolCall("check_business_availability", map[string]any{"business_reference": "biz-nowhere"})},
		{"check_business_availability_not_bookable", toolCall("check_business_availability", map[string]any{"business_reference": "biz-glow-nail-atelier", "service_reference": "svc-gel-manicure", "local_date": "2026-03-04"})},
		{"check_business_availability_invalid_time", toolCall("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut", "local_date": "tomorrow"})},
		{"search_my_bookings", toolCall("search_my_bookings", map[string]any{"status": "upcoming"})},
		{"get_my_booking", toolCall("get_my_booking", map[string]any{"booking_reference": "LSDEMO0001"})},
		{"get_my_booking_not_found", toolCall("get_my_booking", map[string]any{"booking_reference": "LSNOPE0000"})},
		{"check_my_booking_availability", toolCall("check_my_booking_availability", map[string]any{"booking_reference": "LSDEMO0001", "local_date": "2026-03-05"})},
	} {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name, e.transcript(t, tok, tc.body)) })
	}
}

func TestGoldenChallenges(t *testing.T) {
	e := newEnv(t, envOpts{linkScopes: []string{"openid", "bookings:read"}})
	var b strings.Builder
	show := func(title, token, body string) {
		resp := e.rpc(token, body, nil)
		readBody(t, resp)
		fmt.Fprintf(&b, "%s\nHTTP %d\nWWW-Authenticate: %s\n\n", title, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	show("no token", "", toolsList)
	show("invalid token", "garbage", toolsList)
	show("read-only token calls a mutation", e.token(func(c *tokenClaims) { c.Scope = "openid bookings:read" }), toolCall("create_my_booking", map[string]any{}))
	resp, err := httpGet(e.rs.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "GET /.well-known/oauth-protected-resource/mcp\n%s\n", resp)
	golden(t, "challenges", e.normalize(b.String()))
}
