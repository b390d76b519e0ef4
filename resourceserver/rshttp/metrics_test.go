package rshttp_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// TestMetricsAfterAFlow drives a whole booking life through the real
// resource server — a refused call, a read, preview and execute, a replay,
// a refused grant, a cancel — then scrapes the metrics handler and finds
// every family with the labels the runbooks' alerts use.
func TestMetricsAfterAFlow(t *testing.T) {
	m := metrics.New("resourceserver")
	e := newEnv(t, envOpts{metrics: m, noLimits: true})
	m.RegisterDB("main", e.store.SQL())
	ann := e.agentFor(e.account, e.link, "")

	if a := ann.call(tools.SearchBookableBusiness, map[string]any{"query": "haircut"}); a.isError {
		t.Fatalf("search: %s", a.raw)
	}
	if a := ann.call(tools.GetMyBooking, map[string]any{"booking_reference": "LS-NOSUCHBOOK"}); a.code() != "booking_not_found" {
		t.Fatalf("missing booking: %s", a.raw)
	}
	args := haircut("10:00")
	pre := ann.call(tools.CreateMyBooking, args)
	created := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "metrics-create-key-01"))
	if created.isError {
		t.Fatalf("create: %s", created.raw)
	}
	if again := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "metrics-create-key-01")); !again.IdempotentReplay {
		t.Fatalf("replay: %s", again.raw)
	}
	ref := created.Booking.Reference
	if a := ann.call(tools.CancelMyBooking, map[string]any{"booking_reference": ref, "grant": tamper(created.grant())}); a.code() != "invalid_grant" {
		t.Fatalf("tampered grant: %s", a.raw)
	}
	if a := ann.do(tools.CancelMyBooking, map[string]any{"booking_reference": ref, "grant": created.grant()}, "metrics-cancel-key-01"); a.isError {
		t.Fatalf("cancel: %s", a.raw)
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`linkslot_http_requests_total{code="200",route="POST /mcp",service="resourceserver"}`,
		`linkslot_http_request_duration_seconds_bucket{route="POST /mcp",service="resourceserver"`,
		`linkslot_tool_calls_total{outcome="ok",service="resourceserver",tool="search_bookable_business"} 1`,
		`linkslot_tool_calls_total{outcome="booking_not_found",service="resourceserver",tool="get_my_booking"} 1`,
		`linkslot_tool_calls_total{outcome="confirmation_required",service="resourceserver",tool="create_my_booking"} 1`,
		`linkslot_tool_calls_total{outcome="ok",service="resourceserver",tool="create_my_booking"} 2`,
		`linkslot_tool_calls_total{outcome="invalid_grant",service="resourceserver",tool="cancel_my_booking"} 1`,
		`linkslot_bookings_total{action="created",service="resourceserver"} 1`,
		`linkslot_bookings_total{action="cancelled",service="resourceserver"} 1`,
		`linkslot_idempotent_replays_total{service="resourceserver",tool="create_my_booking"} 1`,
		`linkslot_grants_refused_total{reason="invalid_grant",service="resourceserver"} 1`,
		`linkslot_db_up{db="main",service="resourceserver"} 1`,
		`linkslot_db_connections{db="main",service="resourceserver",state="idle"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// No booking reference, grant or email reaches a label.
	for _, secret := range []string{ref, created.grant(), "demo@example.com"} {
		if strings.Contains(text, secret) {
			t.Errorf("metrics contain personal data or a secret: %.20s…", secret)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
