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
	StatusPending              = mutation.StatusPending // waiting for the business (docs/reference.md §16)
)

// mutationStatuses are the statuses of a mutation's answer: the three that
// changed nothing (a preview or a refused confirmation) and done, the
// tool's own.
func mutationStatuses(done ...string) []string {
	return append([]string{StatusConfirmationRequired, mutation.StatusMissingIdempotencyKey, StatusSummaryChanged}, done...)
}

// ConfirmationInput are the five confirmation arguments of every mutation.
// All absent: a preview. All present: execute.
type ConfirmationInput struct {
	ConfirmedSummary             *string `json:"confirmed_summary,omitempty" jsonschema:"second call: the first answer's confirmed_summary, unchanged, once shown to the person"`
	ConfirmationSummaryPresented *bool   `json:"confirmation_summary_presented,omitempty" jsonschema:"second call: true once confirmed_summary was shown word for word"`
	ConfirmationObtained         *bool   `json:"confirmation_obtained,omitempty" jsonschema:"second call: true once the person explicitly agreed to it (choosing a time is not agreement)"`
	UserConfirmationText         *string `json:"user_confirmation_text,omitempty" jsonschema:"second call: the person's words of agreement, as they said them"`
	IdempotencyKey               *string `json:"idempotency_key,omitempty" jsonschema:"second call: a fresh key (a UUID) per intended change; resend it only to retry the same call. Never shown to the person"`
}

func (c ConfirmationInput) fields() mutation.Confirmation {
	return mutation.Confirmation{ConfirmedSummary: c.ConfirmedSummary, SummaryPresented: c.ConfirmationSummaryPresented,
		ConfirmationObtained: c.ConfirmationObtained, UserConfirmationText: c.UserConfirmationText, IdempotencyKey: c.IdempotencyKey}
}

// CreateInput are the arguments of create_my_booking.
type CreateInput struct {
	BusinessReference string `json:"business_reference" jsonschema:"the business, from search_bookable_business"`
	ServiceReference  string `json:"service_reference" jsonschema:"the service, from check_business_availability's catalog"`
	StaffReference    string `json:"staff_reference" jsonschema:"the staff member whose slot holds starts_at, from check_business_availability; when several are free, ask the person"`
	StartsAt          string `json:"starts_at" jsonschema:"a slot's starts_at from check_business_availability, unchanged, e.g. 2026-03-04T10:00:00-05:00"`
	Notes             string `json:"notes,omitempty" jsonschema:"notes the business will read: leave out anything sensitive"`
	OfferReference    string `json:"offer_reference,omitempty" jsonschema:"a waitlist offer held for the person (search_my_bookings status=waitlisted), with the offer's own business, service, staff and starts_at; omit for an ordinary booking"`
	ConfirmationInput
}

// RescheduleInput are the arguments of reschedule_my_booking.
type RescheduleInput struct {
	BookingReference   string `json:"booking_reference" jsonschema:"the booking to move, from search_my_bookings or get_my_booking"`
	Grant              string `json:"grant" jsonschema:"the booking's current grant from the latest answer that carried it (get_my_booking is freshest), unchanged. Never shown to the person"`
	RequestedStartsAt  string `json:"requested_starts_at" jsonschema:"a starts_at from check_my_booking_availability, unchanged, e.g. 2026-03-05T14:30:00-05:00"`
	WithStaffReference string `json:"with_staff_reference,omitempty" jsonschema:"another staff member who performs the service; omit to keep the booking's"`
	ConfirmationInput
}

// CancelInput are the arguments of cancel_my_booking.
type CancelInput struct {
	BookingReference string `json:"booking_reference" jsonschema:"the booking to cancel, from search_my_bookings or get_my_booking"`
	Grant            string `json:"grant" jsonschema:"the booking's current grant from the latest answer that carried it (get_my_booking is freshest), unchanged. Never shown to the person"`
	Reason           string `json:"reason,omitempty" jsonschema:"a reason the business will read"`
	ConfirmationInput
}

// Proposal is the structured form of a confirmation summary: the facts the
// text renders.
type Proposal struct {
	Action                    string     `json:"action"`
	BookingReference          string     `json:"booking_reference,omitempty"`
	BusinessReference         string     `json:"business_reference"`
	BusinessName              string     `json:"business_name"`
	BusinessAddress           string     `json:"business_address,omitempty"`
	ServiceReference          string     `json:"service_reference"`
	ServiceName               string     `json:"service_name"`
	StaffReference            string     `json:"staff_reference"`
	StaffName                 string     `json:"staff_name"`
	TimeZone                  string     `json:"timezone"`
	StartsAt                  time.Time  `json:"starts_at"`
	EndsAt                    time.Time  `json:"ends_at"`
	PreviousStaffName         string     `json:"previous_staff_name,omitempty"`
	PreviousStartsAt          *time.Time `json:"previous_starts_at,omitempty"`
	PreviousEndsAt            *time.Time `json:"previous_ends_at,omitempty"`
	PriceCents                int64      `json:"price_cents" jsonschema:"minor units, paid at the business"`
	Currency                  string     `json:"currency"`
	CancellationPolicy        string     `json:"cancellation_policy,omitempty"`
	CancellationWindowMinutes int        `json:"cancellation_window_minutes"`
	CancellationFeeCents      int64      `json:"cancellation_fee_cents"`
	FeeIfCancelledNowCents    *int64     `json:"fee_if_cancelled_now_cents,omitempty"`
	Notes                     string     `json:"notes,omitempty"`
	PrivacyNotice             string     `json:"privacy_notice,omitempty"`
	Reason                    string     `json:"reason,omitempty"`
}

// Notified says who hears of an executed change (docs/reference.md §11).
type Notified struct {
	Person   string `json:"person" jsonschema:"queued: an e-mail with a calendar invitation; off: no e-mail"`
	Business string `json:"business" jsonschema:"queued: an e-mail; none: no address"`
	Webhooks int    `json:"webhooks" jsonschema:"the business's webhook endpoints notified"`
}

// MutationOutput is the answer of every mutation tool.
type MutationOutput struct {
	Status           string      `json:"status,omitempty" jsonschema:"where the change stands (server instructions): the first three changed nothing; the others mean done"`
	ConfirmedSummary string      `json:"confirmed_summary,omitempty" jsonschema:"the summary to show the person word for word; send it back unchanged as confirmed_summary once they agree"`
	Missing          []string    `json:"missing,omitempty" jsonschema:"the confirmation fields absent or false"`
	Message          string      `json:"message,omitempty" jsonschema:"what to do next"`
	Proposal         *Proposal   `json:"proposal,omitempty" jsonschema:"confirmed_summary's facts, structured"`
	Booking          *BookingOut `json:"booking,omitempty" jsonschema:"the booking after the change, with its new grant"`
	AlreadyCancelled bool        `json:"already_cancelled,omitempty" jsonschema:"cancel: the booking was cancelled before this call; nothing changed"`
	IdempotentReplay bool        `json:"idempotent_replay,omitempty" jsonschema:"the stored answer of an earlier call with this idempotency_key; nothing changed now"`
	Notified         *Notified   `json:"notified,omitempty" jsonschema:"who is told of the change"`
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

var createTool = &mcp.Tool{
	Name:  CreateMyBooking,
	Title: "Book an appointment for the person",
	Description: "Book an appointment for the person. " + protocolRef + `
Pass the references and starts_at exactly as check_business_availability listed them; never invent them. To move an existing booking or change its staff member, use reschedule_my_booking instead: a second booking leaves the first in place.
Done: status confirmed, or pending when the business must still accept: the time is held until booking.respond_by; booking with its booking_reference and grant (keep it to reschedule or cancel); notified.
With offer_reference, it books the slot a waitlist offer holds for the person until held_until, passing the offer's own arguments.
Refusals: slot_taken (check availability again), offer_lapsed (ran out, used or passed on; still on the waitlist), offer_not_found / offer_other_link (not this person's offer, or made through another app), offer_mismatch (not the offer's arguments), deposit_required (give the person booking_url), business_not_bookable (contact the business), too_soon / beyond_booking_horizon / in_the_past (another time), unknown_business / unknown_service / unknown_staff / staff_service_mismatch (use the catalog's references).`,
	OutputSchema: listedOutput[MutationOutput](mutationStatuses(StatusConfirmed, StatusPending)...),
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
	in.OfferReference = strings.TrimSpace(in.OfferReference)
	if in.OfferReference != "" && !referenceRE.MatchString(in.OfferReference) {
		return fail(invalidArg("offer_reference", "offer_reference must be an offer's reference exactly as search_my_bookings status=waitlisted shows it (for example OF-LS-7K2QD9XW3M)."))
	}
	o, err := t.d.Mutations.Create(ctx, agentCaller(ctx, c), mutation.CreateRequest{BusinessRef: in.BusinessReference,
		ServiceRef: in.ServiceReference, StaffRef: in.StaffReference, StartsAt: start, Notes: in.Notes,
		OfferRef: in.OfferReference}, in.fields())
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
	Description: "Move one of the person's bookings to another open time, optionally with another staff member who performs the same service; the service, its duration and the booking_reference stay. " + protocolRef + `
Atomic: after any refusal the booking is exactly as it was. Take the grant from get_my_booking and a time from check_my_booking_availability (optional: the same slot engine checks requested_starts_at either way). A different service is a new booking (create_my_booking), then a cancel.
Done: status rescheduled; booking with a NEW grant (the one you sent stops working); notified (the person and the business are told).
Refusals: invalid_grant (call get_my_booking and use its grant), expired_grant (the appointment has started: contact the business), payment_active (change it with the business), already_cancelled (create a new booking), slot_taken (check availability again), too_soon / beyond_booking_horizon / in_the_past, unknown_staff / staff_service_mismatch, business_not_bookable, booking_not_found.`,
	OutputSchema: listedOutput[MutationOutput](mutationStatuses(StatusRescheduled)...),
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
	Description: "Cancel one of the person's bookings. " + protocolRef + `
To change only the time or the staff member, use reschedule_my_booking instead: cancelling and booking again can cost the late-cancellation fee and lose the slot. Take the grant from get_my_booking. The summary states the fee, if any, that cancelling now costs (settled with the business; nothing is charged here).
Done: status cancelled; booking (cancellation_fee_cents when a fee applies); notified (the person and the business are told). A booking cancelled before this call answers the same with already_cancelled: true, and nothing changed.
Refusals: invalid_grant (call get_my_booking and use its grant), expired_grant / cancellation_closed (it has started: contact the business), payment_active (cancel with the business), booking_not_found.`,
	OutputSchema: listedOutput[MutationOutput](mutationStatuses(StatusCancelled)...),
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
