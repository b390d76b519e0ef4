package rshttp_test

// The mutation tools end to end: the MCP Go SDK client, bearer tokens signed
// by the database keys and verified through the issuer's JWKS, the real
// booking engine, grants, idempotency keys and the store, on SQLite and
// PostgreSQL.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// agent is one MCP client session speaking for one link.
type agent struct {
	t    testing.TB
	cs   *mcp.ClientSession
	link store.Link
}

// answer is one tool result: the decoded structured content, its exact JSON
// and whether it was an error.
type answer struct {
	tools.MutationOutput
	raw     string
	isError bool
}

func (a answer) code() string {
	if a.Error != nil {
		return a.Error.Code
	}
	return ""
}

func (a answer) grant() string {
	if a.Booking == nil {
		return ""
	}
	return a.Booking.Grant
}

func (ag agent) call(name string, args map[string]any) answer {
	ag.t.Helper()
	res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		ag.t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var a answer
	if err := json.Unmarshal(b, &a.MutationOutput); err != nil {
		ag.t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	a.raw, a.isError = string(b), res.IsError
	if len(res.Content) != 1 {
		ag.t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !jsonEqual(tc.Text, res.StructuredContent) {
		ag.t.Fatalf("%s: text content does not repeat the structured content", name)
	}
	return a
}

// confirmed returns args plus the five confirmation fields.
func confirmed(args map[string]any, summary, key string) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["confirmed_summary"] = summary
	out["confirmation_summary_presented"] = true
	out["confirmation_obtained"] = true
	out["user_confirmation_text"] = "Yes, please go ahead."
	out["idempotency_key"] = key
	return out
}

// do previews a mutation and executes it with the summary it returned.
func (ag agent) do(name string, args map[string]any, key string) answer {
	ag.t.Helper()
	pre := ag.call(name, args)
	if pre.isError || pre.Status != tools.StatusConfirmationRequired || pre.ConfirmedSummary == "" || pre.Proposal == nil {
		ag.t.Fatalf("%s preview: %s", name, pre.raw)
	}
	return ag.call(name, confirmed(args, pre.ConfirmedSummary, key))
}

// requestIDTransport sets a fixed X-Request-Id on every request.
type requestIDTransport struct {
	id   string
	base http.RoundTripper
}

func (r requestIDTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(requestid.Header, r.id)
	return r.base.RoundTrip(req)
}

// agentFor connects a session for link (of account) with a fresh token.
func (e *env) agentFor(account store.Account, link store.Link, requestID string) agent {
	e.t.Helper()
	tok := e.token(func(c *tokenClaims) { c.Sub, c.ClientID, c.LinkID = account.ID, link.ClientID, link.ID })
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-mutations-test", Version: "1"}, nil)
	var rt http.RoundTripper = bearerTransport{token: tok}
	if requestID != "" {
		rt = requestIDTransport{id: requestID, base: rt}
	}
	tr := &mcp.StreamableClientTransport{Endpoint: e.resource, HTTPClient: &http.Client{Transport: rt},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := c.Connect(e.ctx, tr, nil)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return agent{t: e.t, cs: cs, link: link}
}

// newLink gives account a link through a new client.
func (e *env) newLink(account store.Account, clientID string) store.Link {
	e.t.Helper()
	now := e.clock.Now()
	c := e.client
	c.ID, c.Name, c.CreatedAt, c.UpdatedAt = clientID, "Agent "+clientID, now, now
	if err := e.store.CreateClient(e.ctx, c); err != nil {
		e.t.Fatal(err)
	}
	l, err := e.store.UpsertLink(e.ctx, account.ID, clientID, []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, now)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func (e *env) count(table string) int64 {
	e.t.Helper()
	var n int64
	if err := e.store.DB().Table(table).Count(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) bookingByRef(ref string) store.Booking {
	e.t.Helper()
	b, err := e.store.GetBookingByReference(e.ctx, ref)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// haircut asks for Marcus Reid's classic haircut at Brightcut Barbers (New
// York) on Wednesday 4 March 2026 at the given local time.
func haircut(hhmm string) map[string]any {
	return map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
		"staff_reference": "stf-marcus-reid", "starts_at": "2026-03-04T" + hhmm + ":00-05:00",
		"notes": "Short on the sides, please."}
}

func TestMutations(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) { mutations(t, newEnv(t, envOpts{noLimits: true, store: s})) })
}

func mutations(t *testing.T, e *env) {
	requireEngine(t, e)
	ann := e.agentFor(e.account, e.link, "req-mutations-0001")
	other := e.agentFor(e.account, e.newLink(e.account, "second-agent"), "")

	// Preview: nothing changes; the summary and its facts come back.
	args := haircut("10:00")
	pre := ann.call(tools.CreateMyBooking, args)
	if pre.isError || pre.Status != "confirmation_required" || pre.Proposal.StaffName != "Marcus Reid" ||
		!strings.Contains(pre.ConfirmedSummary, "America/New_York") || !strings.Contains(pre.ConfirmedSummary, "USD 35.00") ||
		!strings.Contains(pre.ConfirmedSummary, "notes are visible to Brightcut Barbers") || e.count("bookings") != 0 {
		t.Fatalf("preview: %s", pre.raw)
	}

	// Executing with a summary of other facts: summary_changed, the current
	// summary back, nothing booked.
	stale := strings.Replace(pre.ConfirmedSummary, "USD 35.00", "USD 30.00", 1)
	if a := ann.call(tools.CreateMyBooking, confirmed(args, stale, "stale-summary-key-0001")); !a.isError || a.Status != "summary_changed" ||
		a.code() != "summary_changed" || a.ConfirmedSummary != pre.ConfirmedSummary || e.count("bookings") != 0 {
		t.Fatalf("stale summary: %s", a.raw)
	}

	// Missing fields are listed; a missing key alone has its own code; a
	// malformed key is refused.
	partial := map[string]any{}
	for k, v := range args {
		partial[k] = v
	}
	partial["confirmed_summary"], partial["idempotency_key"] = pre.ConfirmedSummary, "missing-fields-key-01"
	a := ann.call(tools.CreateMyBooking, partial)
	if !a.isError || a.Status != "confirmation_required" || strings.Join(a.Missing, ",") != "confirmation_summary_presented,confirmation_obtained,user_confirmation_text" {
		t.Fatalf("missing fields: %s", a.raw)
	}
	noKey := confirmed(args, pre.ConfirmedSummary, "")
	delete(noKey, "idempotency_key")
	if a := ann.call(tools.CreateMyBooking, noKey); a.code() != "missing_idempotency_key" || strings.Join(a.Missing, ",") != "idempotency_key" {
		t.Fatalf("missing key: %s", a.raw)
	}
	if a := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "short")); a.code() != "invalid_idempotency_key" {
		t.Fatalf("short key: %s", a.raw)
	}
	if e.count("bookings") != 0 || e.count("idempotency_records") != 0 {
		t.Fatal("a refused call wrote")
	}

	// Bad input: natural-language time, notes too long.
	bad := haircut("10:00")
	bad["starts_at"] = "Wednesday at 10am"
	if a := ann.call(tools.CreateMyBooking, bad); a.code() != "invalid_time" || a.Error.Field != "starts_at" {
		t.Fatalf("natural-language time: %s", a.raw)
	}
	bad = haircut("10:00")
	bad["notes"] = strings.Repeat("é", 501)
	if a := ann.call(tools.CreateMyBooking, bad); a.code() != "invalid_argument" || a.Error.Field != "notes" {
		t.Fatalf("long notes: %s", a.raw)
	}

	// Execute.
	created := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "create-key-0000000001"))
	if created.isError || created.Status != "confirmed" || created.Booking == nil || created.grant() == "" ||
		created.Booking.Version != 1 || created.Booking.StaffReference != "stf-marcus-reid" || created.IdempotentReplay {
		t.Fatalf("create: %s", created.raw)
	}
	ref := created.Booking.Reference

	// Replay: the same booking and grant, flagged, nothing new.
	again := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "create-key-0000000001"))
	if !again.IdempotentReplay || again.Booking.Reference != ref || again.grant() != created.grant() {
		t.Fatalf("replay: %s", again.raw)
	}
	// Conflict: the key with other arguments.
	if a := ann.call(tools.CreateMyBooking, confirmed(haircut("11:00"), pre.ConfirmedSummary, "create-key-0000000001")); a.code() != "idempotency_conflict" {
		t.Fatalf("conflict: %s", a.raw)
	}
	// The key is scoped to the link: another agent's call with the same key
	// is its own request (here: the slot is taken).
	if a := other.do(tools.CreateMyBooking, args, "create-key-0000000001"); a.code() == "" {
		// The preview already fails; do() would have stopped. Unreachable.
		t.Fatalf("other link, same key: %s", a.raw)
	}
}
