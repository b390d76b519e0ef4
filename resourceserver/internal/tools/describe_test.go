package tools

// The tests behind what the tools/list answer and the server instructions
// say (docs/tool-descriptions.md): each test names the sentence it holds.
// Every answer is validated against the output schema tools/list declares.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

// answer is a tool result as these tests read it.
type answer struct {
	isError          bool
	raw              json.RawMessage
	Status           string      `json:"status"`
	ConfirmedSummary string      `json:"confirmed_summary"`
	Missing          []string    `json:"missing"`
	IdempotentReplay bool        `json:"idempotent_replay"`
	AlreadyCancelled bool        `json:"already_cancelled"`
	Booking          *BookingOut `json:"booking"`
	Error            *ToolError  `json:"error"`
}

// code is the refusal's code (error.code), or "" for a success.
func (a answer) code() string {
	if a.Error != nil {
		return a.Error.Code
	}
	return ""
}

// listedTools are the tools as tools/list declares them.
func (h *toolsHarness) listedTools(t testing.TB) map[string]*mcp.Tool {
	t.Helper()
	lr, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range lr.Tools {
		out[tool.Name] = tool
	}
	return out
}

func schemaOf(t testing.TB, v any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// try calls a tool, validates its answer against the tool's listed output
// schema and decodes it.
func (h *toolsHarness) try(t testing.TB, name string, args map[string]any) answer {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	tool := h.listedTools(t)[name]
	r, err := schemaOf(t, tool.OutputSchema).Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve output schema: %v", name, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(&v); err != nil {
		t.Fatalf("%s: answer does not match the listed output schema: %v\n%s", name, err, b)
	}
	a := answer{isError: res.IsError, raw: b}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.isError != (a.Error != nil) {
		t.Fatalf("%s: isError %v with error %v: %s", name, a.isError, a.Error, b)
	}
	return a
}

// freeSlot finds an open slot of the harness's service on day days after
// the harness's day, or later.
func (h *toolsHarness) freeSlot(t testing.TB, day int) (staff, start string) {
	t.Helper()
	for d := day; d < day+14; d++ {
		a := h.try(t, CheckBusinessAvailability, map[string]any{"business_reference": h.biz, "service_reference": h.svc,
			"local_date": h.epoch.AddDate(0, 0, d).Format("2006-01-02")})
		var out AvailabilityOutput
		if err := json.Unmarshal(a.raw, &out); err != nil || out.Availability == nil {
			continue
		}
		for _, s := range out.Availability.Staff {
			if len(s.Slots) > 0 {
				return s.StaffReference, s.Slots[0].StartsAt.Format(time.RFC3339)
			}
		}
	}
	t.Fatalf("no open slot from day %d", day)
	return "", ""
}

func with(args map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// confirmed is args plus the five confirmation fields of an agreed call.
func confirmed(args map[string]any, summary, key string) map[string]any {
	return with(args, "confirmed_summary", summary, "confirmation_summary_presented", true,
		"confirmation_obtained", true, "user_confirmation_text", "Yes, go ahead", "idempotency_key", key)
}

// preview is the first call's answer; it fails t unless it is one.
func (h *toolsHarness) preview(t testing.TB, tool string, args map[string]any) answer {
	t.Helper()
	a := h.try(t, tool, args)
	if a.isError || a.Status != StatusConfirmationRequired || a.ConfirmedSummary == "" {
		t.Fatalf("%s preview: %s", tool, a.raw)
	}
	return a
}

// book creates a booking at the first open slot from day on, with key.
func (h *toolsHarness) book(t testing.TB, day int, key string) (args map[string]any, done answer) {
	t.Helper()
	staff, start := h.freeSlot(t, day)
	args = map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": staff, "starts_at": start}
	p := h.preview(t, CreateMyBooking, args)
	done = h.try(t, CreateMyBooking, confirmed(args, p.ConfirmedSummary, key))
	if done.isError || done.Status != StatusConfirmed || done.Booking == nil || done.IdempotentReplay {
		t.Fatalf("create: %s", done.raw)
	}
	return args, done
}

func (h *toolsHarness) bookingCount(t testing.TB) int {
	t.Helper()
	a := h.try(t, SearchMyBookings, map[string]any{"status": "all", "limit": 50})
	var out MyBookingsOutput
	if err := json.Unmarshal(a.raw, &out); err != nil {
		t.Fatal(err)
	}
	return len(out.Results)
}

// TestListedInputConstraintsAreEnforced: every constraint tools/list
// declares on an argument (enum, pattern, length, range) is one the server
// enforces — a value outside it is refused, never acted on — and an
// argument problem answers invalid_argument or invalid_time naming the
// field, with the product's message rather than a schema validator's
// (docs/reference.md §4).
func TestListedInputConstraintsAreEnforced(t *testing.T) {
	h := newToolsHarness(t)
	staff, start := h.freeSlot(t, 3)
	createArgs := map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": staff, "starts_at": start}
	moveArgs := map[string]any{"booking_reference": h.ref, "grant": h.grant, "requested_starts_at": start}
	cancelArgs := map[string]any{"booking_reference": h.ref, "grant": h.grant}
	base := map[string]map[string]any{
		SearchBookableBusiness:     {"query": "haircut"},
		CheckBusinessAvailability:  {"business_reference": h.biz, "service_reference": h.svc, "local_date": "2026-03-04"},
		SearchMyBookings:           {},
		GetMyBooking:               {"booking_reference": h.ref},
		CheckMyBookingAvailability: {"booking_reference": h.ref, "local_date": "2026-03-05"},
		CreateMyBooking:            createArgs,
		RescheduleMyBooking:        moveArgs,
		CancelMyBooking:            cancelArgs,
		RequestBusinessCallback:    {"business_reference": h.biz, "topic": "A quote for a wedding party"},
		JoinMyWaitlist: {"business_reference": h.biz, "service_reference": h.svc, "from_local_date": "2026-03-04",
			"to_local_date": "2026-03-06"},
	}
	// A confirmation field is tried in an otherwise complete second call.
	for _, tool := range []string{CreateMyBooking, RescheduleMyBooking, CancelMyBooking, RequestBusinessCallback, JoinMyWaitlist} {
		p := h.preview(t, tool, base[tool])
		base[tool+"/confirmed"] = confirmed(base[tool], p.ConfirmedSummary, "listed-constraints-key-0001")
	}
	referenceCodes := []string{"unknown_business", "unknown_service", "unknown_staff", "booking_not_found", "invalid_argument"}
	confirmationCodes := []string{"confirmation_required", "invalid_idempotency_key", "invalid_argument"}
	argumentCodes := []string{"invalid_argument", "invalid_time"}
	checked := 0
	for name, tool := range h.listedTools(t) {
		in := schemaOf(t, tool.InputSchema)
		for prop, ps := range in.Properties {
			args, codes := base[name], argumentCodes
			if slices.Contains(mutation.ConfirmationFields, prop) {
				args, codes = base[name+"/confirmed"], confirmationCodes
			} else if ps.Pattern == ReferencePattern {
				codes = referenceCodes
			}
			for _, bad := range violations(ps) {
				checked++
				a := h.try(t, name, with(args, prop, bad))
				what := fmt.Sprintf("%s %s=%.40v", name, prop, bad)
				if !a.isError || !slices.Contains(codes, a.code()) {
					t.Errorf("%s: want a refusal in %v, got %s", what, codes, a.raw)
					continue
				}
				if (a.code() == "invalid_argument" || a.code() == "invalid_time") && a.Error.Field != prop {
					t.Errorf("%s: %s names field %q", what, a.code(), a.Error.Field)
				}
				if strings.Contains(a.Error.Message, "validating") {
					t.Errorf("%s: a schema validator's message: %s", what, a.Error.Message)
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d listed constraints tried", checked)
	}
	t.Logf("%d values outside a listed constraint, each refused", checked)
}

// violations are values that break one constraint of s each.
func violations(s *jsonschema.Schema) []any {
	var out []any
	if len(s.Enum) > 0 {
		out = append(out, "someday")
	}
	if s.Pattern != "" {
		out = append(out, strings.Repeat("é", 20)) // no listed pattern takes non-ASCII
	}
	if s.MinLength != nil {
		out = append(out, strings.Repeat("a", *s.MinLength-1))
	}
	if s.MaxLength != nil {
		out = append(out, strings.Repeat("a", *s.MaxLength+1))
	}
	if s.Minimum != nil {
		out = append(out, *s.Minimum-1)
	}
	if s.Maximum != nil {
		out = append(out, *s.Maximum+1)
	}
	return out
}

// TestIdempotencyKeyLifecycle holds the server instructions' paragraph on
// the idempotency key, sentence by sentence.
func TestIdempotencyKeyLifecycle(t *testing.T) {
	t.Run("only a change that executed is stored: after summary_changed the same key executes", func(t *testing.T) {
		h := newToolsHarness(t)
		staff, start := h.freeSlot(t, 3)
		args := map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": staff, "starts_at": start}
		p := h.preview(t, CreateMyBooking, args)
		changed := h.try(t, CreateMyBooking, confirmed(args, "a summary the person never saw", "lifecycle-key-000001"))
		if changed.code() != "summary_changed" || changed.Status != "summary_changed" {
			t.Fatalf("want summary_changed: %s", changed.raw)
		}
		done := h.try(t, CreateMyBooking, confirmed(args, p.ConfirmedSummary, "lifecycle-key-000001"))
		if done.isError || done.Status != StatusConfirmed || done.IdempotentReplay {
			t.Fatalf("the same key after summary_changed: %s", done.raw)
		}
	})
	t.Run("a refusal stores nothing: the same key then executes, even with other arguments", func(t *testing.T) {
		h := newToolsHarness(t)
		past := map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": h.staff,
			"starts_at": h.epoch.Add(-24 * time.Hour).Format(time.RFC3339)}
		refused := h.try(t, CreateMyBooking, confirmed(past, "whatever was shown", "lifecycle-key-000002"))
		if !refused.isError || refused.code() == "idempotency_conflict" {
			t.Fatalf("want a refusal: %s", refused.raw)
		}
		_, done := h.book(t, 3, "lifecycle-key-000002")
		if done.IdempotentReplay {
			t.Fatalf("replayed a refusal: %s", done.raw)
		}
	})
	t.Run("rate_limited stores nothing: the same key then executes", func(t *testing.T) {
		h := newToolsHarnessWith(t, harnessOpts{limit: true})
		staff, start := h.freeSlot(t, 3)
		args := map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": staff, "starts_at": start}
		p := h.preview(t, CreateMyBooking, args)
		for i := 0; ; i++ {
			if a := h.try(t, SearchBookableBusiness, map[string]any{"query": "haircut"}); a.code() == "rate_limited" {
				break
			}
			if i > 100 {
				t.Fatal("never rate limited")
			}
		}
		limited := h.try(t, CreateMyBooking, confirmed(args, p.ConfirmedSummary, "lifecycle-key-000003"))
		if limited.code() != "rate_limited" || limited.Error.RetryAfterSec < 1 {
			t.Fatalf("want rate_limited: %s", limited.raw)
		}
		*h.limitNow = h.limitNow.Add(2 * time.Hour) // two calls' worth
		done := h.try(t, CreateMyBooking, confirmed(args, p.ConfirmedSummary, "lifecycle-key-000003"))
		if done.isError || done.Status != StatusConfirmed || done.IdempotentReplay {
			t.Fatalf("the same key after rate_limited: %s", done.raw)
		}
	})
	t.Run("the same key and arguments answer the stored result with idempotent_replay and change nothing", func(t *testing.T) {
		h := newToolsHarness(t)
		args, done := h.book(t, 3, "lifecycle-key-000004")
		n := h.bookingCount(t)
		again := h.try(t, CreateMyBooking, confirmed(args, done.ConfirmedSummary, "lifecycle-key-000004"))
		if again.isError || !again.IdempotentReplay || again.Status != done.Status ||
			again.Booking.Reference != done.Booking.Reference || again.Booking.Version != done.Booking.Version {
			t.Fatalf("want the stored answer replayed:\nfirst  %s\nreplay %s", done.raw, again.raw)
		}
		if h.bookingCount(t) != n {
			t.Fatal("a replay booked again")
		}
	})
	t.Run("the same key with other arguments answers idempotency_conflict", func(t *testing.T) {
		h := newToolsHarness(t)
		args, done := h.book(t, 3, "lifecycle-key-000005")
		staff, start := h.freeSlot(t, 5)
		other := with(args, "staff_reference", staff, "starts_at", start)
		a := h.try(t, CreateMyBooking, confirmed(other, done.ConfirmedSummary, "lifecycle-key-000005"))
		if a.code() != "idempotency_conflict" {
			t.Fatalf("want idempotency_conflict: %s", a.raw)
		}
	})
	t.Run("the confirmation fields are never compared", func(t *testing.T) {
		h := newToolsHarness(t)
		args, done := h.book(t, 3, "lifecycle-key-000006")
		retry := confirmed(args, "a summary worded otherwise", "lifecycle-key-000006")
		retry["user_confirmation_text"] = "yes please, book it"
		a := h.try(t, CreateMyBooking, retry)
		if a.isError || !a.IdempotentReplay || a.Booking.Reference != done.Booking.Reference {
			t.Fatalf("want a replay: %s", a.raw)
		}
	})
	t.Run("keys are per connection and tool", func(t *testing.T) {
		h := newToolsHarness(t)
		args, done := h.book(t, 3, "lifecycle-key-000007")
		// Another tool: the same key cancels, it does not replay the create.
		cancel := map[string]any{"booking_reference": done.Booking.Reference, "grant": done.Booking.Grant}
		p := h.preview(t, CancelMyBooking, cancel)
		c := h.try(t, CancelMyBooking, confirmed(cancel, p.ConfirmedSummary, "lifecycle-key-000007"))
		if c.isError || c.Status != StatusCancelled || c.IdempotentReplay || c.AlreadyCancelled {
			t.Fatalf("the same key with another tool: %s", c.raw)
		}
		// Another connection of the same person: the key finds nothing,
		// so the create runs again (and books the freed slot).
		other := linkAnother(t, h)
		defer func() { *h.id = *other.prev }()
		*h.id = other.id
		a := h.try(t, CreateMyBooking, confirmed(args, done.ConfirmedSummary, "lifecycle-key-000007"))
		if a.isError || a.IdempotentReplay || a.Booking.Reference == done.Booking.Reference {
			t.Fatalf("the same key through another connection: %s", a.raw)
		}
	})
	t.Run("kept 48 hours", func(t *testing.T) {
		h := newToolsHarness(t)
		if app.IdempotencyTTL != 48*time.Hour {
			t.Fatalf("app.IdempotencyTTL = %v; the instructions say 48 hours", app.IdempotencyTTL)
		}
		args, done := h.book(t, 3, "lifecycle-key-000008")
		now := h.epoch.Add(48*time.Hour - time.Minute)
		k := idempotency.New(h.st, mutation.InTx(h.st), func() time.Time { return now }, app.IdempotencyTTL)
		if n, err := k.Purge(context.Background()); err != nil || n != 0 {
			t.Fatalf("purge before 48 hours: %d %v", n, err)
		}
		if a := h.try(t, CreateMyBooking, confirmed(args, done.ConfirmedSummary, "lifecycle-key-000008")); !a.IdempotentReplay {
			t.Fatalf("no replay before 48 hours: %s", a.raw)
		}
		now = h.epoch.Add(48*time.Hour + time.Minute)
		if n, err := k.Purge(context.Background()); err != nil || n == 0 {
			t.Fatalf("purge after 48 hours: %d %v", n, err)
		}
		if a := h.try(t, CreateMyBooking, confirmed(args, done.ConfirmedSummary, "lifecycle-key-000008")); a.IdempotentReplay {
			t.Fatalf("replayed after 48 hours: %s", a.raw)
		}
	})
}

type otherLink struct {
	id   tokencheck.Identity
	prev *tokencheck.Identity
}

// linkAnother links the harness's person through a second client and
// returns that connection's identity (and the harness's own, to restore).
func linkAnother(t *testing.T, h *toolsHarness) otherLink {
	t.Helper()
	ctx := context.Background()
	cl := store.Client{ID: "second-client", Name: "Second", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
		AllowedScopes: []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite},
		GrantTypes:    []string{"authorization_code"}, CreatedAt: h.epoch, UpdatedAt: h.epoch}
	if err := h.st.CreateClient(ctx, cl); err != nil {
		t.Fatal(err)
	}
	link, err := h.st.UpsertLink(ctx, h.acct.ID, cl.ID, []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, h.epoch)
	if err != nil {
		t.Fatal(err)
	}
	prev := *h.id
	id := prev
	id.LinkID, id.ClientID = link.ID, cl.ID
	return otherLink{id: id, prev: &prev}
}

// TestAlreadyCancelledMeansOneThing: already_cancelled always means the
// booking was cancelled before the call and the call changed nothing —
// cancel_my_booking answers it as status cancelled with already_cancelled
// (in both calls, storing nothing under the key), the tools that move a
// booking as error.code already_cancelled.
func TestAlreadyCancelledMeansOneThing(t *testing.T) {
	h := newToolsHarness(t)
	cancel := map[string]any{"booking_reference": h.ref, "grant": h.grant}
	p := h.preview(t, CancelMyBooking, cancel)
	done := h.try(t, CancelMyBooking, confirmed(cancel, p.ConfirmedSummary, "cancel-once-key-00001"))
	if done.isError || done.Status != StatusCancelled || done.AlreadyCancelled {
		t.Fatalf("cancel: %s", done.raw)
	}
	again := map[string]any{"booking_reference": h.ref, "grant": done.Booking.Grant}
	for _, a := range []answer{
		h.try(t, CancelMyBooking, again),
		h.try(t, CancelMyBooking, confirmed(again, p.ConfirmedSummary, "cancel-twice-key-0001")),
	} {
		if a.isError || a.Status != StatusCancelled || !a.AlreadyCancelled || a.IdempotentReplay || a.Booking.Version != done.Booking.Version {
			t.Fatalf("cancel of a cancelled booking: %s", a.raw)
		}
	}
	// Nothing was stored under the second key: it books afterwards.
	if _, b := h.book(t, 3, "cancel-twice-key-0001"); b.IdempotentReplay {
		t.Fatal("the already-cancelled answer was stored under its key")
	}
	if a := h.try(t, CheckMyBookingAvailability, map[string]any{"booking_reference": h.ref, "local_date": "2026-03-05"}); a.code() != "already_cancelled" {
		t.Fatalf("check_my_booking_availability: %s", a.raw)
	}
	staff, start := h.freeSlot(t, 4)
	if a := h.try(t, RescheduleMyBooking, map[string]any{"booking_reference": h.ref, "grant": done.Booking.Grant,
		"requested_starts_at": start, "with_staff_reference": staff}); a.code() != "already_cancelled" && a.code() != "invalid_grant" {
		t.Fatalf("reschedule_my_booking: %s", a.raw)
	}
}

// TestMyBookingAvailabilityRefusesUpFront: check_my_booking_availability
// refuses, before listing any time, a booking that reschedule_my_booking
// would refuse — with the code the move would meet.
func TestMyBookingAvailabilityRefusesUpFront(t *testing.T) {
	h := newToolsHarness(t)
	ctx := context.Background()
	check := func() answer {
		return h.try(t, CheckMyBookingAvailability, map[string]any{"booking_reference": h.ref, "local_date": "2026-03-06"})
	}
	if a := check(); a.isError {
		t.Fatalf("a movable booking: %s", a.raw)
	}
	b, err := h.st.GetBookingByReference(ctx, h.ref)
	if err != nil {
		t.Fatal(err)
	}
	setPayment := func(state string) {
		if _, err := h.st.UpdateBooking(ctx, b.ID, func(x store.Booking) (store.Booking, error) { x.PaymentState = state; return x, nil }); err != nil {
			t.Fatal(err)
		}
	}
	setPayment(store.PaymentDepositHeld)
	if a := check(); a.code() != "payment_active" {
		t.Fatalf("deposit held: %s", a.raw)
	}
	if a := h.try(t, RescheduleMyBooking, map[string]any{"booking_reference": h.ref, "grant": h.grant,
		"requested_starts_at": h.start}); a.code() != "payment_active" {
		t.Fatalf("the move itself, deposit held: %s", a.raw)
	}
	setPayment(store.PaymentNone)
	if _, err := h.st.SetAgentBooking(ctx, h.biz, false); err != nil {
		t.Fatal(err)
	}
	if a := check(); a.code() != "business_not_bookable" {
		t.Fatalf("agent booking off: %s", a.raw)
	}
	if _, err := h.st.SetAgentBooking(ctx, h.biz, true); err != nil {
		t.Fatal(err)
	}
	// Started: in_the_past here, expired_grant for the move's grant.
	if _, err := h.st.UpdateBooking(ctx, b.ID, func(x store.Booking) (store.Booking, error) {
		d := x.StartsAt.Sub(h.epoch) + time.Minute
		x.StartsAt, x.EndsAt, x.BlockStart, x.BlockEnd = x.StartsAt.Add(-d), x.EndsAt.Add(-d), x.BlockStart.Add(-d), x.BlockEnd.Add(-d)
		return x, nil
	}); err != nil {
		t.Fatal(err)
	}
	if a := check(); a.code() != "in_the_past" {
		t.Fatalf("started: %s", a.raw)
	}
}

// TestStatusAndErrorCode: status says where a change stands, error.code
// why it was refused. A preview is no refusal; a partial confirmation,
// a missing key and a changed summary are refusals whose error.code is
// their status; an executed change has no error.
func TestStatusAndErrorCode(t *testing.T) {
	h := newToolsHarness(t)
	staff, start := h.freeSlot(t, 3)
	args := map[string]any{"business_reference": h.biz, "service_reference": h.svc, "staff_reference": staff, "starts_at": start}
	p := h.preview(t, CreateMyBooking, args)
	if p.isError || p.Error != nil {
		t.Fatalf("a preview is a refusal: %s", p.raw)
	}
	partial := confirmed(args, p.ConfirmedSummary, "status-code-key-00001")
	delete(partial, "confirmation_obtained")
	noKey := confirmed(args, p.ConfirmedSummary, "")
	delete(noKey, "idempotency_key")
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"partial", partial, "confirmation_required"},
		{"no key", noKey, "missing_idempotency_key"},
		{"changed summary", confirmed(args, "not what was shown", "status-code-key-00002"), "summary_changed"},
	} {
		a := h.try(t, CreateMyBooking, tc.args)
		if !a.isError || a.Status != tc.want || a.code() != tc.want {
			t.Errorf("%s: want status and error.code %s: %s", tc.name, tc.want, a.raw)
		}
		if tc.want != "summary_changed" && len(a.Missing) == 0 {
			t.Errorf("%s: missing is empty: %s", tc.name, a.raw)
		}
	}
	done := h.try(t, CreateMyBooking, confirmed(args, p.ConfirmedSummary, "status-code-key-00003"))
	if done.isError || done.Status != StatusConfirmed || done.Error != nil {
		t.Fatalf("executed: %s", done.raw)
	}
	if a := h.try(t, CreateMyBooking, args); !a.isError || a.code() != "slot_taken" || a.Status != "" {
		t.Fatalf("a business refusal carries only error.code: %s", a.raw)
	}
}
