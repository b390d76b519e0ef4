package tools

// The three mutation tools: create_my_booking, reschedule_my_booking and
// cancel_my_booking (CONTRACT §5). Each call runs these steps, in this order:
//
//  1. identify the caller, rate limit, validate the arguments;
//  2. confirm.CheckFields: a malformed confirmation field fails at once;
//  3. when all five confirmation fields are present, look the idempotency
//     key up (Keeper.Lookup): a used key replays its stored answer (with
//     idempotent_replay: true) or answers idempotency_conflict, before the
//     grant or the summary is looked at — a retry of a successful move
//     carries the grant and summary that move superseded;
//  4. reschedule and cancel: verify the grant against the booking as it is
//     now (invalid_grant / expired_grant), before any business rule;
//  5. plan with the booking engine (business rules, nothing written) and
//     render the summary with internal/confirm's builders;
//  6. confirm.Check against that summary: preview, missing fields or
//     summary_changed answer without writing;
//  7. execute under Keeper.Run: the booking write, the idempotency record and
//     the Activity entry commit in one transaction, or nothing does.
//
// The summary renderer is internal/confirm (CreateSummary, RescheduleSummary,
// CancelSummary), fed with the booking engine's booking.Facts.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
)

// Mutator is the part of the booking engine the mutation tools call;
// *booking.Service implements it.
type Mutator interface {
	PlanCreate(ctx context.Context, r booking.CreateRequest) (booking.CreatePlan, error)
	Create(ctx context.Context, tx store.Store, p booking.CreatePlan) (store.Booking, error)
	PlanReschedule(ctx context.Context, r booking.RescheduleRequest) (booking.ReschedulePlan, error)
	Reschedule(ctx context.Context, tx store.Store, p booking.ReschedulePlan) (store.Booking, error)
	PlanCancel(ctx context.Context, r booking.CancelRequest) (booking.CancelPlan, error)
	Cancel(ctx context.Context, tx store.Store, p booking.CancelPlan) (store.Booking, error)
	MyBooking(ctx context.Context, accountID, bookingRef string) (booking.BookingView, error)
}

// GrantVerifier checks a presented booking grant (internal/grant.Issuer).
type GrantVerifier interface {
	Verify(ctx context.Context, token string, want grant.Expect) error
}

// Keeper runs a mutation at most once per (link, tool, key)
// (internal/idempotency.Keeper).
type Keeper interface {
	Lookup(ctx context.Context, linkID, tool, key, argsHash string) (response []byte, found bool, err error)
	Run(ctx context.Context, linkID, tool, key, argsHash string, exec func(tx store.Store) ([]byte, error)) (response []byte, replay bool, err error)
}

var (
	_ Mutator       = (*booking.Service)(nil)
	_ GrantVerifier = (*grant.Issuer)(nil)
	_ Keeper        = (*idempotency.Keeper)(nil)
)

// Statuses of a mutation answer.
const (
	StatusConfirmationRequired = confirm.CodeConfirmationRequired
	StatusSummaryChanged       = confirm.CodeSummaryChanged
	StatusConfirmed            = "confirmed"
	StatusRescheduled          = "rescheduled"
	StatusCancelled            = "cancelled"
)

// Codes the mutation tools answer besides the engine's.
const (
	codeInvalidGrant = "invalid_grant"
	codeExpiredGrant = "expired_grant"
)

// ConfirmationInput are the five confirmation arguments of every mutation.
// All absent: a preview. All present: execute.
type ConfirmationInput struct {
	ConfirmedSummary             *string `json:"confirmed_summary,omitempty" jsonschema:"step 2 only: the confirmed_summary text from the step-1 answer, unchanged, after showing it to the person"`
	ConfirmationSummaryPresented *bool   `json:"confirmation_summary_presented,omitempty" jsonschema:"step 2 only: true once confirmed_summary was shown to the person word for word"`
	ConfirmationObtained         *bool   `json:"confirmation_obtained,omitempty" jsonschema:"step 2 only: true once the person explicitly agreed after seeing the summary (choosing a time is not agreement)"`
	UserConfirmationText         *string `json:"user_confirmation_text,omitempty" jsonschema:"step 2 only: what the person said to agree, 1 to 500 characters, e.g. 'Yes, book it'"`
	IdempotencyKey               *string `json:"idempotency_key,omitempty" jsonschema:"step 2 only: a fresh random key of 16 to 200 printable ASCII characters (a UUID works) for this request; reuse it only when retrying this same request"`
}

func (c ConfirmationInput) fields() confirm.Fields {
	return confirm.Fields{ConfirmedSummary: c.ConfirmedSummary, SummaryPresented: c.ConfirmationSummaryPresented,
		ConfirmationObtained: c.ConfirmationObtained, UserConfirmationText: c.UserConfirmationText, IdempotencyKey: c.IdempotencyKey}
}

// CreateInput are the arguments of create_my_booking.
type CreateInput struct {
	BusinessReference string `json:"business_reference" jsonschema:"the business, from search_bookable_business"`
	ServiceReference  string `json:"service_reference" jsonschema:"the service, from check_business_availability's catalog"`
	StaffReference    string `json:"staff_reference" jsonschema:"the staff member of the chosen slot, copied from check_business_availability (the staff entry whose slots hold starts_at)"`
	StartsAt          string `json:"starts_at" jsonschema:"the exact start instant, RFC 3339 with offset, copied from a slot's starts_at in check_business_availability, e.g. 2026-03-04T10:00:00-05:00; no natural-language times"`
	Notes             string `json:"notes,omitempty" jsonschema:"optional notes for the business, at most 500 characters; the business sees them, so leave out anything sensitive"`
	ConfirmationInput
}

// RescheduleInput are the arguments of reschedule_my_booking.
type RescheduleInput struct {
	BookingReference   string `json:"booking_reference" jsonschema:"the booking to move, from search_my_bookings or get_my_booking; it keeps its reference"`
	Grant              string `json:"grant" jsonschema:"the booking's current grant, from the latest answer that returned this booking (get_my_booking, search_my_bookings, create_my_booking or a previous reschedule); pass it unchanged"`
	RequestedStartsAt  string `json:"requested_starts_at" jsonschema:"the new start instant, RFC 3339 with offset, copied from check_my_booking_availability, e.g. 2026-03-05T14:30:00-05:00; no natural-language times"`
	WithStaffReference string `json:"with_staff_reference,omitempty" jsonschema:"optional: move to this staff member, who must perform the booked service; omit to keep the booking's staff member"`
	ConfirmationInput
}

// CancelInput are the arguments of cancel_my_booking.
type CancelInput struct {
	BookingReference string `json:"booking_reference" jsonschema:"the booking to cancel, from search_my_bookings or get_my_booking"`
	Grant            string `json:"grant" jsonschema:"the booking's current grant, from the latest answer that returned this booking; pass it unchanged"`
	Reason           string `json:"reason,omitempty" jsonschema:"optional reason shown to the business, at most 500 characters"`
	ConfirmationInput
}

// Proposal is the structured form of a confirmation summary: the facts the
// text renders.
type Proposal struct {
	Action                    string     `json:"action" jsonschema:"create, reschedule or cancel"`
	BookingReference          string     `json:"booking_reference,omitempty" jsonschema:"the booking (reschedule and cancel)"`
	BusinessReference         string     `json:"business_reference"`
	BusinessName              string     `json:"business_name"`
	BusinessAddress           string     `json:"business_address,omitempty"`
	ServiceReference          string     `json:"service_reference"`
	ServiceName               string     `json:"service_name"`
	StaffReference            string     `json:"staff_reference"`
	StaffName                 string     `json:"staff_name"`
	TimeZone                  string     `json:"timezone" jsonschema:"the business's IANA time zone"`
	StartsAt                  time.Time  `json:"starts_at" jsonschema:"start (the new start for reschedule), RFC 3339 with the business's offset"`
	EndsAt                    time.Time  `json:"ends_at"`
	PreviousStaffName         string     `json:"previous_staff_name,omitempty" jsonschema:"reschedule: the staff member before the move"`
	PreviousStartsAt          *time.Time `json:"previous_starts_at,omitempty" jsonschema:"reschedule: the start before the move"`
	PreviousEndsAt            *time.Time `json:"previous_ends_at,omitempty"`
	PriceCents                int64      `json:"price_cents" jsonschema:"catalog price in minor units, paid at the business"`
	Currency                  string     `json:"currency"`
	CancellationPolicy        string     `json:"cancellation_policy,omitempty"`
	CancellationWindowMinutes int        `json:"cancellation_window_minutes" jsonschema:"cancelling less than this many minutes before the start costs cancellation_fee_cents"`
	CancellationFeeCents      int64      `json:"cancellation_fee_cents"`
	FeeIfCancelledNowCents    *int64     `json:"fee_if_cancelled_now_cents,omitempty" jsonschema:"cancel: what this cancellation costs if made now"`
	Notes                     string     `json:"notes,omitempty" jsonschema:"create: the notes the business will see"`
	PrivacyNotice             string     `json:"privacy_notice,omitempty"`
	Reason                    string     `json:"reason,omitempty" jsonschema:"cancel: the reason given"`
}

// MutationOutput is the answer of every mutation tool.
type MutationOutput struct {
	Status           string      `json:"status,omitempty" jsonschema:"confirmation_required (nothing changed: show confirmed_summary and ask), summary_changed (nothing changed: show the new summary and ask again), missing_idempotency_key, or the outcome: confirmed, rescheduled, cancelled"`
	ConfirmedSummary string      `json:"confirmed_summary,omitempty" jsonschema:"the summary to show the person word for word; send it back unchanged as confirmed_summary once they agree"`
	Missing          []string    `json:"missing,omitempty" jsonschema:"the confirmation fields the call lacked"`
	Message          string      `json:"message,omitempty" jsonschema:"what to do next"`
	Proposal         *Proposal   `json:"proposal,omitempty" jsonschema:"the facts behind confirmed_summary, structured"`
	Booking          *BookingOut `json:"booking,omitempty" jsonschema:"the booking after the change, with its current grant (the grant you sent no longer works)"`
	AlreadyCancelled bool        `json:"already_cancelled,omitempty" jsonschema:"cancel: the booking was already cancelled; nothing changed"`
	IdempotentReplay bool        `json:"idempotent_replay,omitempty" jsonschema:"true when this is the stored answer of an earlier call with the same idempotency_key; nothing changed this time"`
	Error            *ToolError  `json:"error,omitempty" jsonschema:"present only when nothing was done"`
}

func proposalOf(f booking.Facts) *Proposal {
	p := &Proposal{Action: f.Action, BookingReference: f.BookingReference, BusinessReference: f.BusinessReference,
		BusinessName: f.BusinessName, BusinessAddress: f.BusinessAddress, ServiceReference: f.ServiceReference,
		ServiceName: f.ServiceName, StaffReference: f.StaffReference, StaffName: f.StaffName, TimeZone: f.TimeZone,
		StartsAt: f.StartsAt, EndsAt: f.EndsAt, PriceCents: f.PriceCents, Currency: f.Currency,
		CancellationPolicy: f.CancellationPolicy, CancellationWindowMinutes: f.CancellationWindowMinutes,
		CancellationFeeCents: f.CancellationFeeCents, Notes: f.Notes, Reason: f.Reason}
	switch f.Action {
	case "create":
		p.PrivacyNotice = f.PrivacyNotice
	case "reschedule":
		ps, pe := f.PreviousStartsAt, f.PreviousEndsAt
		p.PreviousStaffName, p.PreviousStartsAt, p.PreviousEndsAt = f.PreviousStaffName, &ps, &pe
	case "cancel":
		fee := f.FeeNow
		p.FeeIfCancelledNowCents = &fee
	}
	return p
}

// viewOf renders a booking written by a mutation with the names its plan
// already resolved, so the answer needs no read outside the transaction.
func viewOf(f booking.Facts, b store.Booking) booking.BookingView {
	loc := f.StartsAt.Location()
	v := booking.BookingView{Reference: b.Reference, Status: b.Status, Version: b.Version,
		BusinessReference: f.BusinessReference, BusinessName: f.BusinessName, ServiceReference: f.ServiceReference,
		ServiceName: f.ServiceName, StaffReference: f.StaffReference, StaffName: f.StaffName, TimeZone: f.TimeZone,
		StartsAt: b.StartsAt.In(loc), EndsAt: b.EndsAt.In(loc), PriceCents: b.PriceCents, Currency: b.Currency,
		Notes: b.Notes, PaymentState: b.PaymentState, CancellationPolicy: f.CancellationPolicy, CancelReason: b.CancelReason,
		CancellationFeeCents: b.CancellationFeeCents, CreatedAt: b.CreatedAt.In(loc), Record: b}
	if v.PaymentState == "" {
		v.PaymentState = store.PaymentNone
	}
	if b.CancelledAt != nil {
		t := b.CancelledAt.In(loc)
		v.CancelledAt = &t
	}
	return v
}

// errMessage is an error's text without its "code: " prefix.
func errMessage(err error, code string) string {
	return strings.TrimPrefix(err.Error(), code+": ")
}

// mutationFail maps a grant, idempotency or engine error to a result.
// Every invalid grant answers the same bytes, whatever the cause.
func (t *toolSet) mutationFail(ctx context.Context, tool string, err error) (*mcp.CallToolResult, any, error) {
	switch {
	case errors.Is(err, grant.ErrInvalidGrant), booking.ErrorCode(err) == booking.CodeBookingChanged:
		// booking_changed: the booking moved on between the grant check
		// and the write, so the grant presented is superseded.
		return fail(&ToolError{Code: codeInvalidGrant, Field: "grant", Message: errMessage(grant.ErrInvalidGrant, codeInvalidGrant)})
	case errors.Is(err, grant.ErrExpiredGrant):
		return fail(&ToolError{Code: codeExpiredGrant, Field: "grant", Message: errMessage(grant.ErrExpiredGrant, codeExpiredGrant)})
	case errors.Is(err, idempotency.ErrConflict):
		return fail(&ToolError{Code: idempotency.CodeConflict, Field: confirm.FieldIdempotencyKey, Message: errMessage(idempotency.ErrConflict, idempotency.CodeConflict)})
	case errors.Is(err, idempotency.ErrInProgress):
		return fail(&ToolError{Code: idempotency.CodeInProgress, RetryAfterSec: idempotency.RetryAfterSec, Message: errMessage(idempotency.ErrInProgress, idempotency.CodeInProgress)})
	case errors.Is(err, idempotency.ErrInvalidKey):
		return fail(&ToolError{Code: idempotency.CodeInvalidKey, Field: confirm.FieldIdempotencyKey, Message: errMessage(idempotency.ErrInvalidKey, idempotency.CodeInvalidKey)})
	}
	return t.domainFail(ctx, tool, err)
}

// parseInstant parses an exact RFC 3339 instant with its offset.
func parseInstant(field, v string) (time.Time, *ToolError) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, &ToolError{Code: booking.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s is required: an exact RFC 3339 instant with its UTC offset, copied from the availability answer.", field)}
	}
	ts, err := booking.ParseInstant(field, v)
	if err != nil {
		return time.Time{}, &ToolError{Code: booking.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s must be an exact RFC 3339 instant with its UTC offset, e.g. 2026-03-04T10:00:00-05:00, copied unchanged from the availability answer; words like \"tomorrow at 3pm\" are not accepted.", field)}
	}
	return ts, nil
}

func maxText(field, v string) *ToolError {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > booking.MaxNotes {
		return invalidArg(field, "%s must be valid text of at most %d characters; shorten it and call again.", field, booking.MaxNotes)
	}
	return nil
}

// mutation is one call's shared state.
type mutation struct {
	tool   string
	c      caller
	fields confirm.Fields
	hash   string
	args   []byte // the arguments for the Activity entry: no grant, no confirmation fields
	// execute: all five confirmation fields are present.
	execute bool
}

// failed answers a failure after step 3. A confirmed call looks its key up
// once more first: a duplicate whose first lookup missed may fail its own
// checks only because the original committed meanwhile (the slot is now
// its own booking's, the grant it carries is superseded, the summary
// changed), and must get the original's answer instead.
func (t *toolSet) failed(ctx context.Context, m *mutation, err error) (*mcp.CallToolResult, any, error) {
	if res, out, ok := t.lateReplay(ctx, m); ok {
		return res, out, nil
	}
	return t.mutationFail(ctx, m.tool, err)
}

func (t *toolSet) lateReplay(ctx context.Context, m *mutation) (*mcp.CallToolResult, any, bool) {
	if !m.execute {
		return nil, nil, false
	}
	raw, found, err := t.d.Keeper.Lookup(ctx, m.c.LinkID, m.tool, *m.fields.IdempotencyKey, m.hash)
	if err != nil || !found {
		return nil, nil, false
	}
	res, out, err := replayed(raw)
	if err != nil {
		return nil, nil, false
	}
	return res, out, true
}

// start runs steps 2–3: malformed confirmation fields fail, and a used key
// replays or conflicts. done reports that the call is answered.
func (t *toolSet) start(ctx context.Context, m *mutation, hashArgs any) (res *mcp.CallToolResult, out any, done bool) {
	r := confirm.CheckFields(m.fields)
	if r.Kind == confirm.InvalidField {
		res, out, _ = fail(&ToolError{Code: r.Code, Field: r.Field, Message: r.Message})
		return res, out, true
	}
	h, err := idempotency.ArgsHash(hashArgs)
	if err != nil {
		res, out, _ = t.domainFail(ctx, m.tool, err)
		return res, out, true
	}
	m.hash = h
	if r.Kind != confirm.Execute {
		return nil, nil, false
	}
	m.execute = true
	if m.c.LinkID == "" {
		res, out, _ = fail(&ToolError{Code: "server_error", Message: "This connection has no link to scope idempotency keys to. Reconnect the Linkslot account and retry."})
		return res, out, true
	}
	raw, found, err := t.d.Keeper.Lookup(ctx, m.c.LinkID, m.tool, *m.fields.IdempotencyKey, h)
	if err != nil {
		res, out, _ = t.mutationFail(ctx, m.tool, err)
		return res, out, true
	}
	if found {
		res, out, err := replayed(raw)
		if err != nil {
			res, out, _ = t.domainFail(ctx, m.tool, err)
		}
		return res, out, true
	}
	return nil, nil, false
}

func replayed(raw []byte) (*mcp.CallToolResult, any, error) {
	b, err := idempotency.WithReplayFlag(raw)
	if err != nil {
		return nil, nil, err
	}
	return nil, json.RawMessage(b), nil
}

// confirmOrExecute runs steps 6–7 once the summary is known. exec performs
// the change through tx and returns the booking and the answer's status.
func (t *toolSet) confirmOrExecute(ctx context.Context, m *mutation, facts booking.Facts,
	exec func(tx store.Store) (store.Booking, MutationOutput, error)) (*mcp.CallToolResult, any, error) {
	summary, err := confirm.ForBooking(facts)
	if err != nil {
		return t.domainFail(ctx, m.tool, err)
	}
	r := confirm.Check(m.fields, summary)
	switch r.Kind {
	case confirm.Preview:
		return nil, MutationOutput{Status: StatusConfirmationRequired, ConfirmedSummary: summary, Message: r.Message, Proposal: proposalOf(facts)}, nil
	case confirm.ConfirmationRequired, confirm.SummaryChanged:
		if res, out, ok := t.lateReplay(ctx, m); ok {
			return res, out, nil
		}
		return &mcp.CallToolResult{IsError: true}, MutationOutput{Status: r.Code, ConfirmedSummary: summary, Missing: r.Missing,
			Message: r.Message, Proposal: proposalOf(facts), Error: &ToolError{Code: r.Code, Message: r.Message}}, nil
	case confirm.InvalidField:
		return fail(&ToolError{Code: r.Code, Field: r.Field, Message: r.Message})
	}
	key, text := *m.fields.IdempotencyKey, *m.fields.UserConfirmationText
	raw, replay, err := t.d.Keeper.Run(ctx, m.c.LinkID, m.tool, key, m.hash, func(tx store.Store) ([]byte, error) {
		b, out, err := exec(tx)
		if err != nil {
			return nil, err
		}
		g, err := t.d.Grants.IssueFor(ctx, b, m.c.LinkID)
		if err != nil {
			return nil, err
		}
		bo := BookingOut{BookingView: viewOf(facts, b), Grant: g}
		out.Booking, out.ConfirmedSummary = &bo, summary
		resp, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		bo.Grant = "" // the Activity page never shows a capability
		outcome, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		if err := tx.AddActivity(ctx, store.Activity{AccountID: m.c.AccountID, LinkID: m.c.LinkID, ClientID: m.c.ClientID,
			Tool: m.tool, Arguments: m.args, Summary: summary, ConfirmationText: text, IdempotencyKey: key,
			Outcome: outcome, RequestID: requestid.From(ctx), CreatedAt: store.UTC(t.d.Clock())}); err != nil {
			return nil, fmt.Errorf("activity: %w", err)
		}
		return resp, nil
	})
	if err != nil {
		return t.failed(ctx, m, err)
	}
	if replay {
		return replayed(raw)
	}
	return nil, json.RawMessage(raw), nil
}

// verifyGrant checks the presented grant against the booking as it is now
// (step 4) and returns that booking's version.
func (t *toolSet) verifyGrant(ctx context.Context, c caller, ref, token, scope string) (int, error) {
	v, err := t.d.Mutations.MyBooking(ctx, c.AccountID, ref)
	if err != nil {
		return 0, err
	}
	if c.LinkID == "" {
		return 0, grant.ErrInvalidGrant
	}
	b := v.Record
	if err := t.d.Verifier.Verify(ctx, strings.TrimSpace(token), grant.Expect{BookingID: b.ID, BusinessID: b.BusinessID,
		LinkID: c.LinkID, Version: b.Version, Scope: scope}); err != nil {
		return 0, err
	}
	return b.Version, nil
}

// activityArgs is the JSON of a call's arguments for the Activity page:
// without the grant (a capability) and without the confirmation fields,
// which the entry records on their own.
func activityArgs(v any) []byte {
	b, _ := json.Marshal(v)
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	for _, k := range []string{"grant", confirm.FieldConfirmedSummary, confirm.FieldSummaryPresented,
		confirm.FieldConfirmationObtained, confirm.FieldUserConfirmationText, confirm.FieldIdempotencyKey} {
		delete(m, k)
	}
	b, _ = json.Marshal(m)
	return b
}

// ---- create_my_booking ----

const twoSteps = `Two steps, always:
1. Call WITHOUT the confirmation fields. Nothing changes; the answer has status confirmation_required, confirmed_summary (the text to show) and proposal (the same facts, structured).
2. Show confirmed_summary to the person word for word and wait for their explicit agreement (choosing a time or saying "ok, what next?" is not agreement). Then call again with the SAME arguments plus confirmed_summary (unchanged), confirmation_summary_presented: true, confirmation_obtained: true, user_confirmation_text (what the person said, 1–500 characters) and idempotency_key (a fresh random 16–200 character key, e.g. a UUID).
A missing confirmation field answers confirmation_required with missing: [...]; only the key missing answers missing_idempotency_key. If the details changed since step 1 (time, staff, price or policy), the answer is summary_changed with the new confirmed_summary and nothing changed: show it and ask again.
Retrying is safe: resend the same arguments with the same idempotency_key and you get the original answer with idempotent_replay: true, nothing done twice. The same key with different arguments answers idempotency_conflict; a new intent needs a new key. rate_limited: wait retry_after_sec and resend the same call.
Report success only when the answer says so; no payment is taken here.`

var createTool = &mcp.Tool{
	Name:  CreateMyBooking,
	Title: "Book an appointment for the person",
	Description: `Book an appointment for the person who connected this account, at a business that accepts agent bookings, after their explicit confirmation. Use business_reference, service_reference, staff_reference and starts_at exactly as search_bookable_business and check_business_availability returned them; never invent references or times. staff_reference is required: the staff member whose slot holds starts_at (ask the person which one when several are free).
` + twoSteps + `
Success: status confirmed and booking (booking_reference, times with the business's UTC offset, price, and grant — keep the grant: reschedule_my_booking and cancel_my_booking need it).
Errors (nothing booked): slot_taken (the time is no longer open: check availability again and offer another time), too_soon / beyond_booking_horizon / in_the_past (outside the business's booking window: pick another time), unknown_business / unknown_service / unknown_staff (use references from the catalog), staff_service_mismatch (that person does not perform the service), business_not_bookable (the person must contact the business), deposit_required (a deposit is needed, which cannot be paid here: give the person booking_url to finish on the web), invalid_time (starts_at is not an exact RFC 3339 instant; field names it), invalid_argument (field names it, e.g. staff_reference missing or notes over 500 characters), invalid_idempotency_key, idempotency_conflict.`,
	OutputSchema: outputSchema[MutationOutput](),
	Annotations:  mutating(),
}

// staffReferenceRequired tells an agent how to fill a missing
// staff_reference (the handler's check and the schema's).
const staffReferenceRequired = "staff_reference is required: pick a staff member from check_business_availability — the staff_reference of the staff entry whose slots hold starts_at."

func (t *toolSet) create(ctx context.Context, req *mcp.CallToolRequest, in CreateInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	in.BusinessReference, in.ServiceReference = strings.TrimSpace(in.BusinessReference), strings.TrimSpace(in.ServiceReference)
	in.StaffReference, in.StartsAt = strings.TrimSpace(in.StaffReference), strings.TrimSpace(in.StartsAt)
	if e := required("business_reference", in.BusinessReference, needBusinessReference); e != nil {
		return fail(e)
	}
	if e := required("service_reference", in.ServiceReference, "service_reference is required: call check_business_availability with the business_reference to list the services."); e != nil {
		return fail(e)
	}
	if e := required("staff_reference", in.StaffReference, staffReferenceRequired); e != nil {
		return fail(e)
	}
	start, e := parseInstant("starts_at", in.StartsAt)
	if e != nil {
		return fail(e)
	}
	if e := maxText("notes", in.Notes); e != nil {
		return fail(e)
	}
	m := &mutation{tool: CreateMyBooking, c: c, fields: in.fields(), args: activityArgs(in)}
	if res, out, done := t.start(ctx, m, in); done {
		return res, out, nil
	}
	plan, err := t.d.Mutations.PlanCreate(ctx, booking.CreateRequest{AccountID: c.AccountID, LinkID: c.LinkID,
		BusinessRef: in.BusinessReference, ServiceRef: in.ServiceReference, StaffRef: in.StaffReference, StartsAt: start, Notes: in.Notes})
	if err != nil {
		return t.failed(ctx, m, err)
	}
	return t.confirmOrExecute(ctx, m, plan.Facts, func(tx store.Store) (store.Booking, MutationOutput, error) {
		b, err := t.d.Mutations.Create(ctx, tx, plan)
		return b, MutationOutput{Status: StatusConfirmed, Message: "Booked. Tell the person it is confirmed; keep booking.grant to reschedule or cancel it later."}, err
	})
}

// ---- reschedule_my_booking ----

var rescheduleTool = &mcp.Tool{
	Name:  RescheduleMyBooking,
	Title: "Move one of the person's bookings",
	Description: `Move one of the person's bookings to another open time (optionally to another staff member who performs the same service), after their explicit confirmation. The move is atomic: on any failure the original booking stays exactly as it was. The service and its duration never change; the staff member stays unless with_staff_reference names another. Get the booking and its current grant from get_my_booking, and a real open time from check_my_booking_availability (optional: the time is validated by the same slot engine either way).
` + twoSteps + `
Success: status rescheduled and booking with its new version and a NEW grant: the grant you sent no longer works; use the new one for any further change.
Errors (nothing changed): invalid_grant (the grant is not this booking's current grant for this connection — it may be from before a change, for another booking, or altered: call get_my_booking and use the grant it returns), expired_grant (the appointment has started: the person must contact the business), booking_not_found (not one of the person's bookings), slot_taken (that time is not open: check availability again; the original booking is untouched), too_soon / beyond_booking_horizon / in_the_past (pick another time), unknown_staff / staff_service_mismatch (choose a staff member who performs the service), already_cancelled (a cancelled booking cannot move: create a new one), payment_active (a payment or deposit hold exists: the person must change it with the business), business_not_bookable, invalid_time (requested_starts_at is not an exact RFC 3339 instant), invalid_argument, invalid_idempotency_key, idempotency_conflict.`,
	OutputSchema: outputSchema[MutationOutput](),
	Annotations:  mutating(),
}

func (t *toolSet) reschedule(ctx context.Context, req *mcp.CallToolRequest, in RescheduleInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	in.BookingReference = booking.NormalizeReference(in.BookingReference)
	in.Grant, in.RequestedStartsAt, in.WithStaffReference = strings.TrimSpace(in.Grant), strings.TrimSpace(in.RequestedStartsAt), strings.TrimSpace(in.WithStaffReference)
	if e := required("booking_reference", in.BookingReference, needBookingReference); e != nil {
		return fail(e)
	}
	if e := required("grant", in.Grant, needGrant); e != nil {
		return fail(e)
	}
	start, e := parseInstant("requested_starts_at", in.RequestedStartsAt)
	if e != nil {
		return fail(e)
	}
	m := &mutation{tool: RescheduleMyBooking, c: c, fields: in.fields(), args: activityArgs(in)}
	if res, out, done := t.start(ctx, m, in); done {
		return res, out, nil
	}
	version, err := t.verifyGrant(ctx, c, in.BookingReference, in.Grant, grant.ScopeReschedule)
	if err != nil {
		return t.failed(ctx, m, err)
	}
	plan, err := t.d.Mutations.PlanReschedule(ctx, booking.RescheduleRequest{AccountID: c.AccountID, BookingRef: in.BookingReference,
		NewStartsAt: start, StaffRef: in.WithStaffReference})
	if err != nil {
		return t.failed(ctx, m, err)
	}
	if plan.Current.Version != version {
		return t.failed(ctx, m, grant.ErrInvalidGrant)
	}
	return t.confirmOrExecute(ctx, m, plan.Facts, func(tx store.Store) (store.Booking, MutationOutput, error) {
		b, err := t.d.Mutations.Reschedule(ctx, tx, plan)
		return b, MutationOutput{Status: StatusRescheduled, Message: "Moved. Tell the person the new time; use booking.grant (the new grant) for any further change."}, err
	})
}

// ---- cancel_my_booking ----

var cancelTool = &mcp.Tool{
	Name:  CancelMyBooking,
	Title: "Cancel one of the person's bookings",
	Description: `Cancel one of the person's bookings, after their explicit confirmation. The summary states the business's cancellation policy and the fee, if any, that cancelling now costs (settled with the business; nothing is charged here). Get the booking and its current grant from get_my_booking.
` + twoSteps + `
Success: status cancelled and the cancelled booking (with cancellation_fee_cents when a late fee applies and its new grant). Cancelling a booking that is already cancelled is not an error: the answer has already_cancelled: true and nothing changed.
Errors (nothing changed): invalid_grant (the grant is not this booking's current grant for this connection: call get_my_booking and use the grant it returns), expired_grant and cancellation_closed (the appointment has started: the person must contact the business), booking_not_found (not one of the person's bookings), payment_active (a payment or deposit hold exists: cancel with the business directly), invalid_argument (field names it, e.g. reason over 500 characters), invalid_idempotency_key, idempotency_conflict.`,
	OutputSchema: outputSchema[MutationOutput](),
	Annotations:  mutating(),
}

func (t *toolSet) cancel(ctx context.Context, req *mcp.CallToolRequest, in CancelInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	in.BookingReference, in.Grant = booking.NormalizeReference(in.BookingReference), strings.TrimSpace(in.Grant)
	if e := required("booking_reference", in.BookingReference, needBookingReference); e != nil {
		return fail(e)
	}
	if e := required("grant", in.Grant, needGrant); e != nil {
		return fail(e)
	}
	if e := maxText("reason", in.Reason); e != nil {
		return fail(e)
	}
	m := &mutation{tool: CancelMyBooking, c: c, fields: in.fields(), args: activityArgs(in)}
	if res, out, done := t.start(ctx, m, in); done {
		return res, out, nil
	}
	version, err := t.verifyGrant(ctx, c, in.BookingReference, in.Grant, grant.ScopeCancel)
	if err != nil {
		return t.failed(ctx, m, err)
	}
	plan, err := t.d.Mutations.PlanCancel(ctx, booking.CancelRequest{AccountID: c.AccountID, BookingRef: in.BookingReference, Reason: in.Reason})
	if err != nil {
		return t.failed(ctx, m, err)
	}
	if plan.Current.Version != version {
		return t.failed(ctx, m, grant.ErrInvalidGrant)
	}
	if plan.AlreadyCancelled {
		// Nothing to change, so nothing to confirm or record: answer at
		// once, in either step (unless this is a retry of the call that
		// cancelled it).
		if res, out, ok := t.lateReplay(ctx, m); ok {
			return res, out, nil
		}
		g, err := t.d.Grants.IssueFor(ctx, plan.Current, c.LinkID)
		if err != nil {
			return t.failed(ctx, m, err)
		}
		bo := BookingOut{BookingView: viewOf(plan.Facts, plan.Current), Grant: g}
		return nil, MutationOutput{Status: StatusCancelled, AlreadyCancelled: true, Booking: &bo,
			Message: "The booking was already cancelled; nothing changed. Tell the person it is cancelled."}, nil
	}
	return t.confirmOrExecute(ctx, m, plan.Facts, func(tx store.Store) (store.Booking, MutationOutput, error) {
		// A booking cancelled by a concurrent request since the plan
		// answers the engine's already_cancelled error (nothing changed).
		b, err := t.d.Mutations.Cancel(ctx, tx, plan)
		return b, MutationOutput{Status: StatusCancelled,
			Message: "Cancelled. Tell the person; mention the fee if booking.cancellation_fee_cents is above zero."}, err
	})
}

func mutating() *mcp.ToolAnnotations {
	f, t := false, true
	return &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: &t, IdempotentHint: true, OpenWorldHint: &f}
}

// registerMutations adds the three mutation tools when their dependencies
// are present.
func registerMutations(s *mcp.Server, t *toolSet) bool {
	d := t.d
	if d.Mutations == nil || d.Grants == nil || d.Verifier == nil || d.Keeper == nil {
		return false
	}
	if t.d.Clock == nil {
		t.d.Clock = store.SystemClock
	}
	mcp.AddTool(s, createTool, t.create)
	mcp.AddTool(s, rescheduleTool, t.reschedule)
	mcp.AddTool(s, cancelTool, t.cancel)
	return true
}
