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

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/testkit"
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
	a, err := ag.try(name, args)
	if err != nil {
		ag.t.Fatal(err)
	}
	var sc any
	json.Unmarshal([]byte(a.raw), &sc)
	checkAnswer(ag.t, ag.cs, name, &mcp.CallToolResult{StructuredContent: sc})
	return a
}

// try is call without t.Fatal, for goroutines.
func (ag agent) try(name string, args map[string]any) (answer, error) {
	res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return answer{}, fmt.Errorf("%s: %w", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var a answer
	if err := json.Unmarshal(b, &a.MutationOutput); err != nil {
		return answer{}, fmt.Errorf("%s: decode %s: %w", name, b, err)
	}
	a.raw, a.isError = string(b), res.IsError
	if len(res.Content) != 1 {
		return answer{}, fmt.Errorf("%s: %d content blocks", name, len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !jsonEqual(tc.Text, res.StructuredContent) {
		return answer{}, fmt.Errorf("%s: text content does not repeat the structured content", name)
	}
	return a, nil
}

// confirmed returns args plus the five confirmation fields.
func confirmed(args map[string]any, summary, key string) map[string]any {
	return testkit.ConfirmedArgs(args, summary, key, "Yes, please go ahead.")
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
	q := e.store.DB().Table(table)
	if table == "outbox_messages" {
		// Reminders, due before the appointment, are counted apart
		// (internal/notify's reminder tests).
		q = q.Where("topic <> ?", "booking.reminder")
	}
	if err := q.Count(&n).Error; err != nil {
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
	// staff_reference is required (docs/reference.md §4), missing or empty: the
	// answer names it and says where to pick one.
	for name, edit := range map[string]func(m map[string]any){
		"missing": func(m map[string]any) { delete(m, "staff_reference") },
		"empty":   func(m map[string]any) { m["staff_reference"] = " " },
	} {
		noStaff := copyArgs(args)
		edit(noStaff)
		a := ann.call(tools.CreateMyBooking, noStaff)
		if a.code() != "invalid_argument" || a.Error.Field != "staff_reference" || !strings.Contains(a.Error.Message, "check_business_availability") {
			t.Fatalf("%s staff_reference: %s", name, a.raw)
		}
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
	// Notified (docs/reference.md §11): the person and Brightcut's contact address
	// get an e-mail each, queued in the booking's transaction.
	if created.Notified == nil || *created.Notified != (tools.Notified{Person: "queued", Business: "queued", Webhooks: 0}) {
		t.Fatalf("create notified: %s", created.raw)
	}
	if n := e.count("outbox_messages"); n != 2 {
		t.Fatalf("%d outbox messages after a create, want 2", n)
	}

	// Replay: the same booking and grant, flagged, nothing new.
	again := ann.call(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, "create-key-0000000001"))
	if !again.IdempotentReplay || again.Booking.Reference != ref || again.grant() != created.grant() ||
		again.Notified == nil || *again.Notified != *created.Notified {
		t.Fatalf("replay: %s", again.raw)
	}
	// Conflict: the key with other arguments.
	if a := ann.call(tools.CreateMyBooking, confirmed(haircut("11:00"), pre.ConfirmedSummary, "create-key-0000000001")); a.code() != "idempotency_conflict" {
		t.Fatalf("conflict: %s", a.raw)
	}
	// The same slot for another agent of the person: slot_taken at once.
	if a := other.call(tools.CreateMyBooking, args); a.code() != "slot_taken" {
		t.Fatalf("taken slot: %s", a.raw)
	}
	if e.count("bookings") != 1 || e.count("activities") != 1 || e.count("idempotency_records") != 1 || e.count("outbox_messages") != 2 {
		t.Fatal("replay, conflict or refusal wrote")
	}

	// Grants: another link, a tampered one and another booking's all answer
	// invalid_grant with the same bytes; nothing is even previewed.
	second := ann.do(tools.CreateMyBooking, haircut("12:00"), "create-key-0000000002")
	move := map[string]any{"booking_reference": ref, "grant": created.grant(), "requested_starts_at": "2026-03-05T14:00:00-05:00"}
	refused := other.call(tools.RescheduleMyBooking, move)
	if !refused.isError || refused.code() != "invalid_grant" || refused.ConfirmedSummary != "" {
		t.Fatalf("grant via another link: %s", refused.raw)
	}
	for name, g := range map[string]string{"tampered": tamper(created.grant()), "another booking's": second.grant(), "garbage": "not-a-grant"} {
		m := copyArgs(move)
		m["grant"] = g
		if a := ann.call(tools.RescheduleMyBooking, m); a.raw != refused.raw {
			t.Fatalf("%s grant answered %s, want the same bytes as %s", name, a.raw, refused.raw)
		}
	}
	if a := other.call(tools.CancelMyBooking, map[string]any{"booking_reference": ref, "grant": created.grant()}); a.raw != refused.raw {
		t.Fatalf("cancel via another link: %s", a.raw)
	}

	// Reschedule: the staff member stays, the version bumps, the grant rotates.
	moved := ann.do(tools.RescheduleMyBooking, move, "move-key-00000000001")
	if moved.isError || moved.Status != "rescheduled" || moved.Booking.Version != 2 || moved.grant() == created.grant() ||
		moved.Booking.StaffReference != "stf-marcus-reid" || moved.Booking.StartsAt.Format(time.RFC3339) != "2026-03-05T14:00:00-05:00" ||
		moved.Booking.Reference != ref {
		t.Fatalf("reschedule: %s", moved.raw)
	}
	// Its retry (superseded grant, old summary) replays the same answer.
	pre2 := moved.ConfirmedSummary
	if a := ann.call(tools.RescheduleMyBooking, confirmed(move, pre2, "move-key-00000000001")); !a.IdempotentReplay || a.grant() != moved.grant() {
		t.Fatalf("reschedule replay: %s", a.raw)
	}
	// The grant from before the move, on a new request: invalid_grant.
	later := copyArgs(move)
	later["requested_starts_at"] = "2026-03-05T16:00:00-05:00"
	if a := ann.call(tools.RescheduleMyBooking, later); a.raw != refused.raw {
		t.Fatalf("superseded grant: %s", a.raw)
	}

	// slot_taken at execution leaves the booking as it was.
	move2 := map[string]any{"booking_reference": ref, "grant": moved.grant(), "requested_starts_at": "2026-03-05T15:00:00-05:00"}
	pre3 := ann.call(tools.RescheduleMyBooking, move2)
	if pre3.Status != "confirmation_required" || pre3.Proposal.PreviousStartsAt == nil {
		t.Fatalf("move preview: %s", pre3.raw)
	}
	taker := haircut("10:00")
	taker["starts_at"] = "2026-03-05T15:00:00-05:00"
	if a := other.do(tools.CreateMyBooking, taker, "other-agent-key-00001"); a.Status != "confirmed" {
		t.Fatalf("other agent takes the slot: %s", a.raw)
	}
	if a := ann.call(tools.RescheduleMyBooking, confirmed(move2, pre3.ConfirmedSummary, "move-key-00000000002")); a.code() != "slot_taken" {
		t.Fatalf("taken slot: %s", a.raw)
	}
	if b := e.bookingByRef(ref); b.Version != 2 || !b.StartsAt.Equal(moved.Booking.StartsAt) || b.Status != store.BookingConfirmed {
		t.Fatalf("after slot_taken the booking is %+v", b)
	}

	// Another staff member: only one who performs the service.
	for staff, code := range map[string]string{"stf-luis-ortega": "staff_service_mismatch", "stf-nobody": "unknown_staff"} {
		m := copyArgs(move2)
		m["requested_starts_at"], m["with_staff_reference"] = "2026-03-05T16:00:00-05:00", staff
		if a := ann.call(tools.RescheduleMyBooking, m); a.code() != code || a.Error.Field != "with_staff_reference" {
			t.Fatalf("%s: %s", staff, a.raw)
		}
	}
	move3 := copyArgs(move2)
	move3["requested_starts_at"], move3["with_staff_reference"] = "2026-03-05T16:00:00-05:00", "stf-dana-kowalski"
	toDana := ann.do(tools.RescheduleMyBooking, move3, "move-key-00000000003")
	if toDana.Status != "rescheduled" || toDana.Booking.StaffReference != "stf-dana-kowalski" || toDana.Booking.Version != 3 {
		t.Fatalf("move to Dana: %s", toDana.raw)
	}

	// deposit_required: the web page, no booking.
	before := e.count("bookings")
	dep := ann.call(tools.CreateMyBooking, map[string]any{"business_reference": "biz-thames-physio", "service_reference": "svc-sports-massage",
		"staff_reference": "stf-priya-shah", "starts_at": "2026-03-05T10:00:00Z"})
	if dep.code() != "deposit_required" || dep.Error.BookingURL != "https://thamesphysio.example/book" || e.count("bookings") != before {
		t.Fatalf("deposit: %s", dep.raw)
	}

	// Cancel, then cancel again: already_cancelled, a success.
	cancel := map[string]any{"booking_reference": strings.ToLower(ref), "grant": toDana.grant(), "reason": "Travelling"}
	done := ann.do(tools.CancelMyBooking, cancel, "cancel-key-000000001")
	if done.isError || done.Status != "cancelled" || done.Booking.Status != store.BookingCancelled || done.Booking.Version != 4 ||
		done.grant() == "" || done.grant() == toDana.grant() || done.AlreadyCancelled {
		t.Fatalf("cancel: %s", done.raw)
	}
	twice := ann.call(tools.CancelMyBooking, map[string]any{"booking_reference": ref, "grant": done.grant()})
	if twice.isError || !twice.AlreadyCancelled || twice.Status != "cancelled" || twice.Booking.Version != 4 {
		t.Fatalf("cancel twice: %s", twice.raw)
	}
	if a := ann.call(tools.CancelMyBooking, map[string]any{"booking_reference": ref, "grant": toDana.grant()}); a.raw != refused.raw {
		t.Fatalf("cancel with the superseded grant: %s", a.raw)
	}

	// Activity: one entry per executed mutation, written with it.
	acts, err := e.store.ListActivity(e.ctx, e.account.ID, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 6 || e.count("idempotency_records") != 6 {
		t.Fatalf("%d activity entries, %d idempotency records; want 6 and 6", len(acts), e.count("idempotency_records"))
	}
	var first store.Activity
	for _, a := range acts {
		if a.IdempotencyKey == "create-key-0000000001" {
			first = a
		}
		if strings.Contains(string(a.Arguments), "grant") || strings.Contains(string(a.Outcome), "\"grant\"") ||
			strings.Contains(string(a.Arguments), "confirmed_summary") {
			t.Fatalf("activity keeps a grant or confirmation field: %s / %s", a.Arguments, a.Outcome)
		}
	}
	if first.Tool != tools.CreateMyBooking || first.LinkID != e.link.ID || first.ClientID != e.client.ID ||
		first.Summary != pre.ConfirmedSummary || first.ConfirmationText != "Yes, please go ahead." ||
		first.RequestID != "req-mutations-0001" || !first.CreatedAt.Equal(e.clock.Now()) ||
		!strings.Contains(string(first.Outcome), ref) || !strings.Contains(string(first.Arguments), "svc-classic-haircut") {
		t.Fatalf("activity entry: %+v", first)
	}

	// Past the appointment start an authentic grant has expired.
	e.clock.Advance(3 * 24 * time.Hour) // Thursday 5 March, 09:00 UTC: booking "second" (4 March) has started
	late := e.agentFor(e.account, e.link, "")
	for _, tool := range []string{tools.CancelMyBooking, tools.RescheduleMyBooking} {
		a := late.call(tool, map[string]any{"booking_reference": second.Booking.Reference, "grant": second.grant(),
			"requested_starts_at": "2026-03-06T10:00:00-05:00"})
		if tool == tools.CancelMyBooking {
			a = late.call(tool, map[string]any{"booking_reference": second.Booking.Reference, "grant": second.grant()})
		}
		if a.code() != "expired_grant" {
			t.Fatalf("%s past the start: %s", tool, a.raw)
		}
	}
}

func copyArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// tamper changes one character of a grant's signature.
func tamper(g string) string {
	parts := strings.Split(g, ".")
	if len(parts) != 3 {
		return g + "x"
	}
	sig := []byte(parts[2])
	if sig[5] == 'A' {
		sig[5] = 'B'
	} else {
		sig[5] = 'A'
	}
	return parts[0] + "." + parts[1] + "." + string(sig)
}

// TestMutationsThroughTheAuthorizationServer: the person's agent connects
// through the real authorization server (PKCE, consent), then books, moves
// and cancels on the live clock.
func TestMutationsThroughTheAuthorizationServer(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		sys := newSystemOn(t, false, s)
		ag := agent{t: t, cs: sys.connect("demo-mcp-client")}
		day := booking.DemoBarberDay(time.Now(), 3)
		av := callOK(t, ag.cs, tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-brightcut-barbers",
			"service_reference": "svc-classic-haircut", "local_date": day, "with_staff_reference": "stf-marcus-reid"})
		var slots struct {
			Availability struct {
				Staff []struct {
					Slots []struct {
						StartsAt string `json:"starts_at"`
					} `json:"slots"`
				} `json:"staff"`
			} `json:"availability"`
		}
		b, _ := json.Marshal(av)
		if json.Unmarshal(b, &slots) != nil || len(slots.Availability.Staff) != 1 || len(slots.Availability.Staff[0].Slots) < 2 {
			t.Fatalf("availability: %s", b)
		}
		open := slots.Availability.Staff[0].Slots
		args := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
			"staff_reference": "stf-marcus-reid", "starts_at": open[0].StartsAt}
		created := ag.do(tools.CreateMyBooking, args, "e2e-create-key-00001")
		if created.Status != tools.StatusConfirmed {
			t.Fatalf("create: %s", created.raw)
		}
		got := callOK(t, ag.cs, tools.GetMyBooking, map[string]any{"booking_reference": created.Booking.Reference})
		g, _ := got["booking"].(map[string]any)["grant"].(string)
		moved := ag.do(tools.RescheduleMyBooking, map[string]any{"booking_reference": created.Booking.Reference, "grant": g,
			"requested_starts_at": open[len(open)-1].StartsAt}, "e2e-move-key-0000001")
		if moved.Status != tools.StatusRescheduled || moved.Booking.Version != 2 {
			t.Fatalf("reschedule: %s", moved.raw)
		}
		done := ag.do(tools.CancelMyBooking, map[string]any{"booking_reference": created.Booking.Reference, "grant": moved.grant()}, "e2e-cancel-key-00001")
		if done.Status != tools.StatusCancelled || done.Booking.Status != store.BookingCancelled {
			t.Fatalf("cancel: %s", done.raw)
		}
		acts, err := sys.store.ListActivity(sys.ctx, sys.account.ID, 10, 0)
		if err != nil || len(acts) != 3 || acts[0].ClientID != "demo-mcp-client" || acts[0].RequestID == "" {
			t.Fatalf("activity: %+v %v", acts, err)
		}
	})
}

// TestMutationGoldens pins a preview and two refusals, identical on both
// backends.
func TestMutationGoldens(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{noLimits: true, store: s})
		tok := e.token(nil)
		args := haircut("10:00")
		golden(t, "create_my_booking_preview", e.transcript(t, tok, toolCall(tools.CreateMyBooking, args)))
		golden(t, "create_my_booking_summary_changed", e.transcript(t, tok, toolCall(tools.CreateMyBooking,
			confirmed(args, "Book this appointment: something else", "golden-key-00000001"))))
		b := e.demoBooking(t)
		golden(t, "cancel_my_booking_invalid_grant", e.transcript(t, tok, toolCall(tools.CancelMyBooking,
			map[string]any{"booking_reference": b.Reference, "grant": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"})))
	})
}

// TestMutationRules: the booking engine's refusals surface with the
// documented codes and change nothing.
func TestMutationRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, envOpts{noLimits: true, store: s})
		ann := e.agentFor(e.account, e.link, "")
		for start, code := range map[string]string{
			"2026-03-02T04:30:00-05:00": "too_soon",               // now is 04:00 in New York; 60 minutes' notice
			"2026-06-01T10:00:00-04:00": "beyond_booking_horizon", // 60 days
			"2026-03-01T10:00:00-05:00": "in_the_past",
			"2026-03-04T10:07:00-05:00": "slot_taken", // off the 15-minute grid
		} {
			a := haircut("10:00")
			a["starts_at"] = start
			if got := ann.call(tools.CreateMyBooking, a); got.code() != code || code != "slot_taken" && got.Error.Field != "starts_at" {
				t.Errorf("%s: %s, want %s", start, got.raw, code)
			}
		}
		a := haircut("10:00")
		a["business_reference"] = "biz-glow-nail-atelier"
		if got := ann.call(tools.CreateMyBooking, a); got.code() != "business_not_bookable" {
			t.Errorf("agent booking off: %s", got.raw)
		}

		// A booking with a payment on it can be neither moved nor cancelled.
		b := e.demoBooking(t)
		if _, err := e.store.UpdateBooking(e.ctx, b.ID, func(cur store.Booking) (store.Booking, error) {
			cur.PaymentState = store.PaymentPaid
			return cur, nil
		}); err != nil {
			t.Fatal(err)
		}
		g := callOK(t, ann.cs, tools.GetMyBooking, map[string]any{"booking_reference": b.Reference})["booking"].(map[string]any)["grant"].(string)
		if got := ann.call(tools.CancelMyBooking, map[string]any{"booking_reference": b.Reference, "grant": g}); got.code() != "payment_active" {
			t.Errorf("cancel with a payment: %s", got.raw)
		}
		if got := ann.call(tools.RescheduleMyBooking, map[string]any{"booking_reference": b.Reference, "grant": g,
			"requested_starts_at": "2026-03-05T10:00:00-05:00"}); got.code() != "payment_active" {
			t.Errorf("move with a payment: %s", got.raw)
		}
		if got := ann.call(tools.CancelMyBooking, map[string]any{"booking_reference": "LS-NOTMINE000", "grant": g}); got.code() != "booking_not_found" {
			t.Errorf("unknown booking: %s", got.raw)
		}
		if e.count("bookings") != 1 || e.count("activities") != 0 || e.count("idempotency_records") != 0 {
			t.Fatal("a refusal wrote")
		}
	})
}
