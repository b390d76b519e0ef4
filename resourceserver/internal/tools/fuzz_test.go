package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/ratelimit"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

// fuzzTools are the tools a fuzz input picks from by index.
var fuzzTools = []string{SearchBookableBusiness, CheckBusinessAvailability, SearchMyBookings, GetMyBooking,
	CheckMyBookingAvailability, CreateMyBooking, RescheduleMyBooking, CancelMyBooking}

// documentedCodes are the error codes (and the non-executing mutation
// statuses) a failed tool result may carry (docs/reference.md §5, "Error codes").
var documentedCodes = map[string]bool{
	"invalid_argument": true, "invalid_time": true, "unknown_business": true, "unknown_service": true,
	"unknown_staff": true, "staff_service_mismatch": true, "business_not_bookable": true, "slot_taken": true,
	"too_soon": true, "beyond_booking_horizon": true, "in_the_past": true, "deposit_required": true,
	"payment_active": true, "booking_not_found": true, "already_cancelled": true, "cancellation_closed": true,
	"invalid_grant": true, "expired_grant": true, "confirmation_required": true, "summary_changed": true,
	"missing_idempotency_key": true, "invalid_idempotency_key": true, "idempotency_conflict": true, "rate_limited": true,
}

// toolsHarness is one MCP server with every tool, on a SQLite store with the
// demo catalogs and one confirmed booking, and a client connected to it in
// memory; every call carries the identity of a linked account with both
// booking scopes (what the router hands the tools in production).
type toolsHarness struct {
	cs           *mcp.ClientSession
	placeholders *strings.Replacer

	// For the behaviour tests (describe_test.go): the store, the fixed
	// time, the account, the identity every call carries (a test may
	// point it at another link), the real booking's arguments, and the
	// per-link limiter's clock (harnessOpts.limit).
	st                                 *sqlstore.Store
	epoch                              time.Time
	acct                               store.Account
	id                                 *tokencheck.Identity
	biz, svc, staff, start, ref, grant string
	limitNow                           *time.Time
}

// harnessOpts shape newToolsHarnessWith.
type harnessOpts struct {
	// limit puts a real per-link limiter (burst 60, 1 call an hour) in
	// front of the tools, on its own clock (toolsHarness.limitNow).
	limit bool
}

func newToolsHarness(tb testing.TB) *toolsHarness { return newToolsHarnessWith(tb, harnessOpts{}) }

func newToolsHarnessWith(tb testing.TB, o harnessOpts) *toolsHarness {
	tb.Helper()
	ctx := context.Background()
	st := sqltest.SQLite(tb)
	epoch := time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return epoch }
	limitNow := epoch
	var links Limiter
	if o.limit {
		links = ratelimit.New(ratelimit.Limit{PerSecond: 1.0 / 3600, Burst: 60}, func() time.Time { return limitNow })
	}
	acct := store.Account{ID: store.NewID("acct"), Email: "fuzz@example.com", PasswordHash: "x", CreatedAt: epoch, UpdatedAt: epoch}
	if err := st.CreateAccount(ctx, acct); err != nil {
		tb.Fatal(err)
	}
	cl := store.Client{ID: "demo-mcp-client", Name: "Demo", Public: true, RedirectURIs: []string{"http://127.0.0.1/callback"},
		AllowedScopes: []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite},
		GrantTypes:    []string{"authorization_code", "refresh_token"}, CreatedAt: epoch, UpdatedAt: epoch}
	if err := st.CreateClient(ctx, cl); err != nil {
		tb.Fatal(err)
	}
	link, err := st.UpsertLink(ctx, acct.ID, cl.ID, []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, epoch)
	if err != nil {
		tb.Fatal(err)
	}
	cats := booking.DemoCatalogs(epoch)
	for _, c := range cats {
		if _, err := st.PutCatalog(ctx, c); err != nil {
			tb.Fatal(err)
		}
	}
	km := keys.NewManager(st, []byte("0123456789abcdef0123456789abcdef-fuzz"), store.KeyPurposeGrant, clock)
	if err := km.Ensure(ctx); err != nil {
		tb.Fatal(err)
	}
	issuer := grant.New(keys.NewSigningCache(km, time.Hour, clock), clock)
	engine := booking.NewService(st, clock)
	srv := NewServer(Deps{Domain: engine, Grants: issuer, Links: links, Mutations: &mutation.Service{Engine: engine, Grants: issuer,
		Keeper: idempotency.New(st, mutation.InTx(st), clock, app.IdempotencyTTL), Clock: clock, Accounts: st}}, nil)
	id := tokencheck.Identity{AccountID: acct.ID, LinkID: link.ID, ClientID: cl.ID,
		Scopes: []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, Expiry: epoch.Add(time.Hour)}
	// What the router does after verifying a bearer token.
	idp := &id
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(tokencheck.WithIdentity(ctx, *idp), method, req)
		}
	})
	ct, sct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, sct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Close() })
	h := &toolsHarness{cs: cs, st: st, epoch: epoch, acct: acct, id: idp, limitNow: &limitNow}

	// One confirmed booking, so inputs can name a real booking and grant.
	biz, svc := cats[0].Business.Reference, cats[0].Services[0].Reference
	var slot struct {
		staff, start string
	}
	for d := 1; d <= 14 && slot.start == ""; d++ {
		out := h.call(tb, CheckBusinessAvailability, map[string]any{"business_reference": biz, "service_reference": svc,
			"local_date": epoch.AddDate(0, 0, d).Format("2006-01-02")})
		var a AvailabilityOutput
		if err := json.Unmarshal(out, &a); err != nil || a.Availability == nil {
			continue
		}
		for _, s := range a.Availability.Staff {
			if len(s.Slots) > 0 {
				slot.staff, slot.start = s.StaffReference, s.Slots[0].StartsAt.Format(time.RFC3339)
				break
			}
		}
	}
	if slot.start == "" {
		tb.Fatal("no open slot in the demo catalog")
	}
	args := map[string]any{"business_reference": biz, "service_reference": svc, "staff_reference": slot.staff, "starts_at": slot.start}
	var step1 MutationOutput
	if err := json.Unmarshal(h.call(tb, CreateMyBooking, args), &step1); err != nil || step1.ConfirmedSummary == "" {
		tb.Fatalf("step 1: %+v %v", step1, err)
	}
	args["confirmed_summary"], args["confirmation_summary_presented"], args["confirmation_obtained"] = step1.ConfirmedSummary, true, true
	args["user_confirmation_text"], args["idempotency_key"] = "Yes, book it", "fuzz-harness-key-0001"
	raw := h.call(tb, CreateMyBooking, args)
	var booked struct {
		Booking *BookingOut `json:"booking"`
	}
	if err := json.Unmarshal(raw, &booked); err != nil || booked.Booking == nil {
		tb.Fatalf("step 2: %s %v", raw, err)
	}
	h.biz, h.svc, h.staff, h.start, h.ref, h.grant = biz, svc, slot.staff, slot.start, booked.Booking.Reference, booked.Booking.Grant
	q := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	h.placeholders = strings.NewReplacer("{{business}}", q(biz), "{{service}}", q(svc), "{{staff}}", q(slot.staff),
		"{{starts_at}}", q(slot.start), "{{ref}}", q(booked.Booking.Reference), "{{grant}}", q(booked.Booking.Grant),
		"{{summary}}", q(step1.ConfirmedSummary))
	return h
}

// call runs a tool and returns its structured content.
func (h *toolsHarness) call(tb testing.TB, name string, args any) json.RawMessage {
	tb.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return b
}

// FuzzToolArguments sends arbitrary JSON arguments to every tool through
// the SDK's own tools/call path (schema validation, decoding, the
// handlers). Placeholders such as {{ref}} and {{grant}} stand for the
// harness's real booking. Every well-formed call answers a success or an
// isError result whose code is a documented code, never server_error, never a
// protocol error, never a panic.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []struct {
		tool uint8
		args string
	}{
		{0, `{"query":"haircut"}`}, {0, `{"query":"dentist","city":"Lisbon","limit":50,"offset":0}`},
		{0, `{"query":"x","limit":0}`}, {0, `{"query":"x","limit":"ten"}`}, {0, `{}`}, {0, `{"query":"' OR 1=1 --"}`},
		{1, `{"business_reference":"{{business}}"}`},
		{1, `{"business_reference":"{{business}}","service_reference":"{{service}}","local_date":"2026-03-04"}`},
		{1, `{"business_reference":"{{business}}","service_reference":"{{service}}","local_date":"tomorrow"}`},
		{1, `{"business_reference":"{{business}}","service_reference":"{{service}}","local_date":"2026-02-30","with_staff_reference":"{{staff}}"}`},
		{2, `{"status":"all","limit":1,"offset":1}`}, {2, `{"status":"someday"}`},
		{3, `{"booking_reference":"{{ref}}"}`}, {3, `{"booking_reference":"LS-NOPE"}`},
		{4, `{"booking_reference":"{{ref}}","local_date":"2026-03-05"}`},
		{5, `{"business_reference":"{{business}}","service_reference":"{{service}}","staff_reference":"{{staff}}","starts_at":"{{starts_at}}"}`},
		{5, `{"business_reference":"{{business}}","service_reference":"{{service}}","staff_reference":"{{staff}}","starts_at":"next monday"}`},
		{5, `{"business_reference":"{{business}}","service_reference":"{{service}}","staff_reference":"{{staff}}","starts_at":"{{starts_at}}","confirmed_summary":"{{summary}}","confirmation_summary_presented":true,"confirmation_obtained":true,"user_confirmation_text":"yes","idempotency_key":"short"}`},
		{6, `{"booking_reference":"{{ref}}","grant":"{{grant}}","requested_starts_at":"2026-03-05T10:00:00-05:00"}`},
		{6, `{"booking_reference":"{{ref}}","grant":"not-a-grant","requested_starts_at":"2026-03-05T10:00:00"}`},
		{7, `{"booking_reference":"{{ref}}","grant":"{{grant}}"}`},
		{7, `{"booking_reference":"{{ref}}","grant":"{{grant}}","confirmed_summary":"{{summary}}","confirmation_summary_presented":true,"confirmation_obtained":false,"user_confirmation_text":"","idempotency_key":"0123456789abcdef0123"}`},
	} {
		f.Add(s.tool, s.args)
	}
	h := newToolsHarness(f)
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		name := fuzzTools[int(tool)%len(fuzzTools)]
		args = h.placeholders.Replace(args)
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return // not a JSON object: not a well-formed tools/call
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				t.Fatalf("%s %s: protocol error %d %s", name, args, werr.Code, werr.Message)
			}
			t.Fatalf("%s %s: %v", name, args, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		t.Logf("%s %s -> isError=%v %.300s", name, args, res.IsError, b)
		var out struct {
			Error  *ToolError `json:"error"`
			Status string     `json:"status"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: structured content %s: %v", name, args, b, err)
		}
		if !res.IsError {
			if out.Error != nil {
				t.Fatalf("%s %s: success carrying an error: %s", name, args, b)
			}
			return
		}
		code := out.Status
		if out.Error != nil {
			code = out.Error.Code
			if out.Error.Message == "" {
				t.Fatalf("%s %s: error without a message: %s", name, args, b)
			}
		}
		if !documentedCodes[code] {
			t.Fatalf("%s %s: isError result with code %q, not a documented code: %s", name, args, code, b)
		}
	})
}
