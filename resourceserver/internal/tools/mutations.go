package tools

// The three mutation tools: create_my_booking, reschedule_my_booking and
// cancel_my_booking (docs/reference.md §5). Each handler identifies the caller,
// applies the rate limit, decodes and checks its arguments (the field named
// in every invalid_argument / invalid_time answer), calls the mutation
// service (internal/mutation), which makes every decision of the protocol —
// confirmation, idempotency, grant, plan, summary, execution, Activity — and
// renders its Outcome as MutationOutput.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
)

// Mutations is the mutation protocol (*mutation.Service).
type Mutations interface {
	Create(ctx context.Context, c mutation.Caller, r mutation.CreateRequest, conf mutation.Confirmation) (mutation.Outcome, error)
	Reschedule(ctx context.Context, c mutation.Caller, r mutation.RescheduleRequest, conf mutation.Confirmation) (mutation.Outcome, error)
	Cancel(ctx context.Context, c mutation.Caller, r mutation.CancelRequest, conf mutation.Confirmation) (mutation.Outcome, error)
}

var _ Mutations = (*mutation.Service)(nil)

// Statuses of a mutation answer.
const (
	StatusConfirmationRequired = mutation.StatusConfirmationRequired
	StatusSummaryChanged       = mutation.StatusSummaryChanged
	StatusConfirmed            = mutation.StatusConfirmed
	StatusRescheduled          = mutation.StatusRescheduled
	StatusCancelled            = mutation.StatusCancelled
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

func (c ConfirmationInput) fields() mutation.Confirmation {
	return mutation.Confirmation{ConfirmedSummary: c.ConfirmedSummary, SummaryPresented: c.ConfirmationSummaryPresented,
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

// Notified says who hears of an executed change (docs/reference.md §11).
type Notified struct {
	Person   string `json:"person" jsonschema:"queued: the person gets an e-mail with a calendar invitation; off: e-mail is switched off on this server"`
	Business string `json:"business" jsonschema:"queued: the business gets an e-mail; none: the business has no contact e-mail address"`
	Webhooks int    `json:"webhooks" jsonschema:"how many of the business's webhook endpoints get the event"`
}

// MutationOutput is the answer of every mutation tool.
type MutationOutput struct {
	Status           string      `json:"status,omitempty" jsonschema:"confirmation_required (nothing changed: show confirmed_summary and ask), summary_changed (nothing changed: show the new summary and ask again), missing_idempotency_key, or the outcome: confirmed, pending (booked, waiting for the business to confirm by booking.respond_by), rescheduled, cancelled"`
	ConfirmedSummary string      `json:"confirmed_summary,omitempty" jsonschema:"the summary to show the person word for word; send it back unchanged as confirmed_summary once they agree"`
	Missing          []string    `json:"missing,omitempty" jsonschema:"the confirmation fields the call lacked"`
	Message          string      `json:"message,omitempty" jsonschema:"what to do next"`
	Proposal         *Proposal   `json:"proposal,omitempty" jsonschema:"the facts behind confirmed_summary, structured"`
	Booking          *BookingOut `json:"booking,omitempty" jsonschema:"the booking after the change, with its current grant (the grant you sent no longer works)"`
	AlreadyCancelled bool        `json:"already_cancelled,omitempty" jsonschema:"cancel: the booking was already cancelled; nothing changed"`
	IdempotentReplay bool        `json:"idempotent_replay,omitempty" jsonschema:"true when this is the stored answer of an earlier call with the same idempotency_key; nothing changed this time"`
	Notified         *Notified   `json:"notified,omitempty" jsonschema:"who was told of the change: tell the person whether they get an e-mail"`
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

// parseInstant parses an exact RFC 3339 instant with its offset.
func parseInstant(field, v string) (time.Time, *problem.Error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, &problem.Error{Code: problem.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s is required: an exact RFC 3339 instant with its UTC offset, copied from the availability answer.", field)}
	}
	ts, err := booking.ParseInstant(field, v)
	if err != nil {
		return time.Time{}, &problem.Error{Code: problem.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s must be an exact RFC 3339 instant with its UTC offset, e.g. 2026-03-04T10:00:00-05:00, copied unchanged from the availability answer; words like \"tomorrow at 3pm\" are not accepted.", field)}
	}
	return ts, nil
}

// render answers a mutation service result: an error as a failed result,
// an Outcome as MutationOutput. done is the message of an executed change.
func (t *toolSet) render(ctx context.Context, tool string, o mutation.Outcome, err error, done string) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return t.domainFail(ctx, tool, err)
	}
	out := MutationOutput{Status: o.Status, ConfirmedSummary: o.Summary, Missing: o.Missing,
		AlreadyCancelled: o.AlreadyCancelled, IdempotentReplay: o.Replay}
	if o.Booking == nil {
		out.Message, out.Proposal = o.Message, proposalOf(o.Facts)
		if o.Refused() {
			out.Error = toolError(problem.New(o.Status, o.Message))
			return &mcp.CallToolResult{IsError: true}, out, nil
		}
		return nil, out, nil
	}
	out.Booking, out.Message = &BookingOut{BookingView: *o.Booking, Grant: o.Grant}, done
	if o.Notified != nil {
		n := Notified(*o.Notified)
		out.Notified = &n
	}
	if o.AlreadyCancelled {
		out.Message = "The booking was already cancelled; nothing changed. Tell the person it is cancelled."
	}
	return nil, out, nil
}

func agentCaller(ctx context.Context, c caller) mutation.Caller {
	return mutation.Caller{AccountID: c.AccountID, LinkID: c.LinkID, ClientID: c.ClientID, Channel: mutation.ChannelAgent,
		RequestID: requestid.From(ctx)}
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
Success: status confirmed and booking (booking_reference, times with the business's UTC offset, price, and grant — keep the grant: reschedule_my_booking and cancel_my_booking need it). A service with requires_confirmation answers status pending instead: the time is held, and the business confirms or declines by booking.respond_by (the person is told by e-mail; unanswered, it is declined).
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
	o, err := t.d.Mutations.Create(ctx, agentCaller(ctx, c), mutation.CreateRequest{BusinessRef: in.BusinessReference,
		ServiceRef: in.ServiceReference, StaffRef: in.StaffReference, StartsAt: start, Notes: in.Notes}, in.fields())
	done := "Booked. Tell the person it is confirmed; keep booking.grant to reschedule or cancel it later."
	if o.Status == mutation.StatusPending && !o.Replay || o.Booking != nil && o.Booking.Status == mutation.StatusPending {
		done = "Requested. Tell the person the business must confirm it: the time is held until booking.respond_by, and they will get an e-mail with the answer (unanswered by then, it is declined). Keep booking.grant to cancel it."
	}
	return t.render(ctx, CreateMyBooking, o, err, done)
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
	o, err := t.d.Mutations.Reschedule(ctx, agentCaller(ctx, c), mutation.RescheduleRequest{BookingRef: in.BookingReference,
		Grant: in.Grant, StartsAt: start, StaffRef: in.WithStaffReference}, in.fields())
	return t.render(ctx, RescheduleMyBooking, o, err, "Moved. Tell the person the new time; use booking.grant (the new grant) for any further change.")
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
	o, err := t.d.Mutations.Cancel(ctx, agentCaller(ctx, c), mutation.CancelRequest{BookingRef: in.BookingReference,
		Grant: in.Grant, Reason: in.Reason}, in.fields())
	return t.render(ctx, CancelMyBooking, o, err, "Cancelled. Tell the person; mention the fee if booking.cancellation_fee_cents is above zero.")
}

func mutating() *mcp.ToolAnnotations {
	f, t := false, true
	return &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: &t, IdempotentHint: true, OpenWorldHint: &f}
}

// registerMutations adds the three mutation tools when the mutation service
// is present.
func registerMutations(r registry, t *toolSet) bool {
	if t.d.Mutations == nil {
		return false
	}
	addTool(r, createTool, t.create)
	addTool(r, rescheduleTool, t.reschedule)
	addTool(r, cancelTool, t.cancel)
	return true
}
