package idempotency_test

// The mutation protocol end to end at the domain level: the booking engine,
// booking grants, summarize-then-confirm and idempotency keys composed in
// the order a tool handler should use (see the package docs), on both
// backends. The MCP tools add argument parsing and result shapes around
// exactly these steps.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/store/storetest"
)

// confirmArgs are the five confirmation arguments every mutation takes.
type confirmArgs struct {
	ConfirmedSummary     *string `json:"confirmed_summary,omitempty"`
	SummaryPresented     *bool   `json:"confirmation_summary_presented,omitempty"`
	ConfirmationObtained *bool   `json:"confirmation_obtained,omitempty"`
	UserConfirmationText *string `json:"user_confirmation_text,omitempty"`
	IdempotencyKey       *string `json:"idempotency_key,omitempty"`
}

func (c confirmArgs) fields() confirm.Fields {
	return confirm.Fields{ConfirmedSummary: c.ConfirmedSummary, SummaryPresented: c.SummaryPresented,
		ConfirmationObtained: c.ConfirmationObtained, UserConfirmationText: c.UserConfirmationText, IdempotencyKey: c.IdempotencyKey}
}

func confirmed(summary, key string) confirmArgs {
	y := true
	text := "Yes, go ahead."
	return confirmArgs{ConfirmedSummary: &summary, SummaryPresented: &y, ConfirmationObtained: &y, UserConfirmationText: &text, IdempotencyKey: &key}
}

type createArgs struct {
	BusinessReference string `json:"business_reference"`
	ServiceReference  string `json:"service_reference"`
	StaffReference    string `json:"staff_reference"`
	StartsAt          string `json:"starts_at"`
	Notes             string `json:"notes,omitempty"`
	confirmArgs
}

type rescheduleArgs struct {
	BookingReference   string `json:"booking_reference"`
	Grant              string `json:"grant"`
	RequestedStartsAt  string `json:"requested_starts_at"`
	WithStaffReference string `json:"with_staff_reference,omitempty"`
	confirmArgs
}

type cancelArgs struct {
	BookingReference string `json:"booking_reference"`
	Grant            string `json:"grant"`
	Reason           string `json:"reason,omitempty"`
	confirmArgs
}

// answer is the tool result, reduced to what the tests look at.
type answer struct {
	Status    string   `json:"status,omitempty"`
	Code      string   `json:"code,omitempty"`
	Summary   string   `json:"confirmed_summary,omitempty"`
	Missing   []string `json:"missing,omitempty"`
	Reference string   `json:"booking_reference,omitempty"`
	Version   int      `json:"version,omitempty"`
	StartsAt  string   `json:"starts_at,omitempty"`
	Grant     string   `json:"grant,omitempty"`
	Replay    bool     `json:"idempotent_replay,omitempty"`
}

// caller is the verified identity of the request.
type caller struct{ AccountID, LinkID, ClientID string }

type proto struct {
	st *sqlstore.Store
	// faults wraps st for the mutations, to inject failures.
	faults *storetest.Faults
	clk    *clock
	svc    *booking.Service
	iss    *grant.Issuer
	keep   *idempotency.Keeper
}

func newProto(t *testing.T, st *sqlstore.Store) *proto {
	t.Helper()
	all := []time.Weekday{0, 1, 2, 3, 4, 5, 6}
	var hours []store.HoursWindow
	for _, d := range all {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 9 * 60, EndMin: 17 * 60})
	}
	_, err := st.PutCatalog(ctx, store.Catalog{
		Business: store.Business{Reference: "biz-ny", Name: "Harbor Dental", Category: store.CategoryAppointment, City: "New York",
			Address: "12 Water St", TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 60, HorizonDays: 30,
			SlotIntervalMinutes: 15, CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 2500, Currency: "USD",
			CancellationPolicy: "Please give 24 hours' notice."},
		OpeningHours: hours,
		Services:     []store.Service{{Reference: "svc-clean", Name: "Cleaning", DurationMinutes: 45, PriceCents: 12000, Currency: "USD"}},
		Staff: []store.Staff{{Reference: "stf-ana", Name: "Dr. Ana Ruiz", ServiceIDs: []string{"svc-clean"}},
			{Reference: "stf-bo", Name: "Dr. Bo Chen", ServiceIDs: []string{"svc-clean"}}},
		StaffHours: map[string][]store.HoursWindow{"stf-ana": hours, "stf-bo": hours},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	km := keys.NewManager(st, []byte("protocol test secret, long enough"), "booking-grant", c.now)
	if err := km.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	fs := storetest.WithFaults(st)
	return &proto{st: st, faults: fs, clk: c, svc: booking.NewService(fs, c.now), iss: grant.New(km, c.now), keep: idempotency.New(fs, c.now, 24*time.Hour)}
}

func codeOf(err error) string {
	switch {
	case errors.Is(err, grant.ErrInvalidGrant):
		return "invalid_grant"
	case errors.Is(err, grant.ErrExpiredGrant):
		return "expired_grant"
	case errors.Is(err, idempotency.ErrConflict):
		return idempotency.CodeConflict
	case errors.Is(err, idempotency.ErrInProgress):
		return idempotency.CodeInProgress
	case errors.Is(err, idempotency.ErrInvalidKey):
		return idempotency.CodeInvalidKey
	}
	if c := booking.ErrorCode(err); c != "" {
		return c
	}
	return "server_error: " + err.Error()
}

// gate runs the steps every mutation shares once the plan and its summary
// are known: confirmation, then execution under the key, with the activity
// entry in the same transaction.
func (p *proto) gate(who caller, tool string, args any, c confirmArgs, summary string,
	exec func(tx store.Store) (answer, error)) answer {
	res := confirm.Check(c.fields(), summary)
	if !res.OK() {
		return answer{Status: res.Code, Code: res.Code, Summary: res.Summary, Missing: res.Missing}
	}
	h, _ := idempotency.ArgsHash(args)
	argsJSON, _ := json.Marshal(args)
	raw, replay, err := p.keep.Run(ctx, who.LinkID, tool, *c.IdempotencyKey, h, func(tx store.Store) ([]byte, error) {
		out, err := exec(tx)
		if err != nil {
			return nil, err
		}
		raw, _ := json.Marshal(out)
		return raw, tx.AddActivity(ctx, store.Activity{AccountID: who.AccountID, LinkID: who.LinkID, ClientID: who.ClientID,
			Tool: tool, Arguments: argsJSON, Summary: summary, ConfirmationText: *c.UserConfirmationText,
			IdempotencyKey: *c.IdempotencyKey, Outcome: raw, CreatedAt: p.clk.now()})
	})
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	return decode(raw, replay)
}

func decode(raw []byte, replay bool) answer {
	if replay {
		raw, _ = idempotency.WithReplayFlag(raw)
	}
	var a answer
	_ = json.Unmarshal(raw, &a)
	return a
}

// early handles what comes before planning: malformed confirmation fields,
// and a replay or conflict of a key already used.
func (p *proto) early(who caller, tool string, args any, c confirmArgs) (answer, bool) {
	r := confirm.CheckFields(c.fields())
	if r.Kind == confirm.InvalidField {
		return answer{Code: r.Code}, true
	}
	if r.Kind != confirm.Execute {
		return answer{}, false
	}
	h, _ := idempotency.ArgsHash(args)
	raw, found, err := p.keep.Lookup(ctx, who.LinkID, tool, *c.IdempotencyKey, h)
	if err != nil {
		return answer{Code: codeOf(err)}, true
	}
	if found {
		return decode(raw, true), true
	}
	return answer{}, false
}

func (p *proto) out(ctx context.Context, who caller, status string, b store.Booking) (answer, error) {
	g, err := p.iss.IssueFor(ctx, b, who.LinkID)
	if err != nil {
		return answer{}, err
	}
	return answer{Status: status, Reference: b.Reference, Version: b.Version, StartsAt: b.StartsAt.Format(time.RFC3339), Grant: g}, nil
}

func (p *proto) create(who caller, a createArgs) answer {
	if ans, done := p.early(who, "create_my_booking", a, a.confirmArgs); done {
		return ans
	}
	start, err := time.Parse(time.RFC3339, a.StartsAt)
	if err != nil {
		return answer{Code: "invalid_time"}
	}
	plan, err := p.svc.PlanCreate(ctx, booking.CreateRequest{AccountID: who.AccountID, LinkID: who.LinkID,
		BusinessRef: a.BusinessReference, ServiceRef: a.ServiceReference, StaffRef: a.StaffReference, StartsAt: start, Notes: a.Notes})
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	summary, err := confirm.ForBooking(plan.Facts)
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	return p.gate(who, "create_my_booking", a, a.confirmArgs, summary, func(tx store.Store) (answer, error) {
		b, err := p.svc.Create(ctx, tx, plan)
		if err != nil {
			return answer{}, err
		}
		return p.out(ctx, who, "confirmed", b)
	})
}

// checkGrant verifies the grant against the booking as it is now, before
// any business rule (so a started booking answers expired_grant).
func (p *proto) checkGrant(who caller, ref, token, scope string) (store.Booking, error) {
	v, err := p.svc.MyBooking(ctx, who.AccountID, ref)
	if err != nil {
		return store.Booking{}, err
	}
	b := v.Record
	return b, p.iss.Verify(ctx, token, grant.Expect{BookingID: b.ID, BusinessID: b.BusinessID, LinkID: who.LinkID, Version: b.Version, Scope: scope})
}

// superseded turns a booking changed under the plan into invalid_grant: the
// grant presented was for the version that no longer exists.
func superseded(err error) error {
	if booking.ErrorCode(err) == booking.CodeBookingChanged {
		return grant.ErrInvalidGrant
	}
	return err
}

func (p *proto) reschedule(who caller, a rescheduleArgs) answer {
	if ans, done := p.early(who, "reschedule_my_booking", a, a.confirmArgs); done {
		return ans
	}
	cur, err := p.checkGrant(who, a.BookingReference, a.Grant, grant.ScopeReschedule)
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	start, err := time.Parse(time.RFC3339, a.RequestedStartsAt)
	if err != nil {
		return answer{Code: "invalid_time"}
	}
	plan, err := p.svc.PlanReschedule(ctx, booking.RescheduleRequest{AccountID: who.AccountID, BookingRef: a.BookingReference,
		NewStartsAt: start, StaffRef: a.WithStaffReference})
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	if plan.Current.Version != cur.Version {
		return answer{Code: "invalid_grant"}
	}
	summary, err := confirm.ForBooking(plan.Facts)
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	return p.gate(who, "reschedule_my_booking", a, a.confirmArgs, summary, func(tx store.Store) (answer, error) {
		b, err := p.svc.Reschedule(ctx, tx, plan)
		if err != nil {
			return answer{}, superseded(err)
		}
		return p.out(ctx, who, "rescheduled", b)
	})
}

func (p *proto) cancel(who caller, a cancelArgs) answer {
	if ans, done := p.early(who, "cancel_my_booking", a, a.confirmArgs); done {
		return ans
	}
	cur, err := p.checkGrant(who, a.BookingReference, a.Grant, grant.ScopeCancel)
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	plan, err := p.svc.PlanCancel(ctx, booking.CancelRequest{AccountID: who.AccountID, BookingRef: a.BookingReference, Reason: a.Reason})
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	if plan.Current.Version != cur.Version {
		return answer{Code: "invalid_grant"}
	}
	summary, err := confirm.ForBooking(plan.Facts)
	if err != nil {
		return answer{Code: codeOf(err)}
	}
	return p.gate(who, "cancel_my_booking", a, a.confirmArgs, summary, func(tx store.Store) (answer, error) {
		b, err := p.svc.Cancel(ctx, tx, plan)
		if err != nil {
			return answer{}, superseded(err)
		}
		return p.out(ctx, who, "cancelled", b)
	})
}

func (p *proto) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := p.st.DB().Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestProtocol(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		p := newProto(t, st)
		ann := caller{AccountID: "acc_ann", LinkID: "lnk_agent1", ClientID: "cli_1"}
		other := caller{AccountID: "acc_ann", LinkID: "lnk_agent2", ClientID: "cli_2"}

		// Create: preview, then execute with the summary unchanged.
		ca := createArgs{BusinessReference: "biz-ny", ServiceReference: "svc-clean", StaffReference: "stf-ana",
			StartsAt: "2026-06-03T10:00:00-04:00", Notes: "First visit."}
		pre := p.create(ann, ca)
		if pre.Status != "confirmation_required" || pre.Summary == "" || p.count(t, "bookings") != 0 {
			t.Fatalf("preview: %+v", pre)
		}
		ca.confirmArgs = confirmed(pre.Summary, "create-key-000000001")
		created := p.create(ann, ca)
		if created.Status != "confirmed" || created.Grant == "" || created.Version != 1 {
			t.Fatalf("create: %+v", created)
		}
		// Replay: the same booking and the same grant, nothing new.
		if again := p.create(ann, ca); !again.Replay || again.Reference != created.Reference || again.Grant != created.Grant {
			t.Fatalf("replay: %+v", again)
		}
		// Conflict: the key with other arguments.
		ca2 := ca
		ca2.StartsAt = "2026-06-03T11:00:00-04:00"
		if c := p.create(ann, ca2); c.Code != "idempotency_conflict" {
			t.Fatalf("conflict: %+v", c)
		}
		if p.count(t, "bookings") != 1 || p.count(t, "activities") != 1 {
			t.Fatal("replay or conflict wrote")
		}

		// Reschedule with a stale summary: summary_changed, nothing moved.
		ra := rescheduleArgs{BookingReference: created.Reference, Grant: created.Grant, RequestedStartsAt: "2026-06-04T14:00:00-04:00",
			confirmArgs: confirmed(pre.Summary, "move-key-00000000001")}
		if r := p.reschedule(ann, ra); r.Code != "summary_changed" || r.Summary == "" {
			t.Fatalf("stale summary: %+v", r)
		}
		// A grant used by another link of the same person: invalid_grant.
		if r := p.reschedule(other, ra); r.Code != "invalid_grant" {
			t.Fatalf("other link: %+v", r)
		}
		// Fault between the booking write and the record: neither stays.
		preview := p.reschedule(ann, rescheduleArgs{BookingReference: ra.BookingReference, Grant: ra.Grant, RequestedStartsAt: ra.RequestedStartsAt})
		ra.confirmArgs = confirmed(preview.Summary, "move-key-00000000002")
		p.faults.FailAfterBookingWrite(errors.New("injected fault"))
		if r := p.reschedule(ann, ra); r.Code == "" || r.Status != "" {
			t.Fatalf("fault: %+v", r)
		}
		p.faults.FailAfterBookingWrite(nil)
		if b, _ := st.GetBookingByReference(ctx, created.Reference); b.Version != 1 || p.count(t, "idempotency_records") != 1 || p.count(t, "activities") != 1 {
			t.Fatalf("after fault: version %d", b.Version)
		}
		// The same key again executes; the version bumps and the grant rotates.
		moved := p.reschedule(ann, ra)
		if moved.Status != "rescheduled" || moved.Version != 2 || moved.Grant == created.Grant {
			t.Fatalf("reschedule: %+v", moved)
		}
		// A retry with the superseded grant and the old summary replays.
		if r := p.reschedule(ann, ra); !r.Replay || r.Grant != moved.Grant {
			t.Fatalf("replay after move: %+v", r)
		}
		// The old grant on a new request: invalid_grant.
		ra3 := ra
		ra3.RequestedStartsAt = "2026-06-05T14:00:00-04:00"
		ra3.confirmArgs = confirmArgs{}
		if r := p.reschedule(ann, ra3); r.Code != "invalid_grant" {
			t.Fatalf("superseded grant: %+v", r)
		}

		// Cancel with the rotated grant; the answer carries the next one.
		xa := cancelArgs{BookingReference: created.Reference, Grant: moved.Grant, Reason: "Travelling"}
		xp := p.cancel(ann, xa)
		if xp.Status != "confirmation_required" {
			t.Fatalf("cancel preview: %+v", xp)
		}
		// Past the appointment start, the authentic grant has expired.
		saved := p.clk.now()
		p.clk.add(5 * 24 * time.Hour)
		if r := p.cancel(ann, xa); r.Code != "expired_grant" {
			t.Fatalf("expired: %+v", r)
		}
		p.clk.set(saved)
		xa.confirmArgs = confirmed(xp.Summary, "cancel-key-000000001")
		if r := p.cancel(ann, xa); r.Status != "cancelled" || r.Version != 3 {
			t.Fatalf("cancel: %+v", r)
		}
		if p.count(t, "activities") != 3 || p.count(t, "idempotency_records") != 3 {
			t.Fatalf("activities %d records %d", p.count(t, "activities"), p.count(t, "idempotency_records"))
		}
	})
}
