package tools

// The two tools of docs/reference.md §16 that hand a person's wish to the
// business when a booking cannot do it: request_business_callback and
// join_my_waitlist. Like the booking mutations, each handler checks its
// arguments and calls the mutation service, which runs the whole protocol.

import (
	"context"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
)

// Tool names of §16.
const (
	RequestBusinessCallback = mutation.OpCallback
	JoinMyWaitlist          = mutation.OpWaitlist
)

// Handoffs are the mutation service's two §16 operations
// (*mutation.Service).
type Handoffs interface {
	RequestCallback(ctx context.Context, c mutation.Caller, r mutation.CallbackRequest, conf mutation.Confirmation) (mutation.Outcome, error)
	JoinWaitlist(ctx context.Context, c mutation.Caller, r mutation.WaitlistRequest, conf mutation.Confirmation) (mutation.Outcome, error)
}

var _ Handoffs = (*mutation.Service)(nil)

// Waitlists lists a person's waitlist entries (*booking.Service), for
// search_my_bookings status=waitlisted.
type Waitlists interface {
	MyWaitlist(ctx context.Context, accountID string, limit, offset int) (booking.WaitlistPage, error)
}

var _ Waitlists = (*booking.Service)(nil)

// CallbackInput are the arguments of request_business_callback.
type CallbackInput struct {
	BusinessReference string `json:"business_reference" jsonschema:"the business, from search_bookable_business"`
	Topic             string `json:"topic" jsonschema:"in a few words, what the person wants to talk about, e.g. a quote for repainting a kitchen"`
	PreferredTimes    string `json:"preferred_times,omitempty" jsonschema:"when the person would like to be contacted, in their words, e.g. weekday mornings"`
	Notes             string `json:"notes,omitempty" jsonschema:"details the business will read: leave out anything sensitive"`
	ConfirmationInput
}

// CallbackProposal is what a callback request's summary shows, structured.
type CallbackProposal struct {
	BusinessReference string `json:"business_reference"`
	BusinessName      string `json:"business_name"`
	Topic             string `json:"topic"`
	PreferredTimes    string `json:"preferred_times,omitempty"`
	Notes             string `json:"notes,omitempty"`
	ContactEmail      string `json:"contact_email" jsonschema:"the account's verified address: the business sees it and answers there"`
}

// CallbackOutput is the answer of request_business_callback.
type CallbackOutput struct {
	Status           string                 `json:"status,omitempty" jsonschema:"where the request stands (server instructions): the first three changed nothing; requested means sent"`
	ConfirmedSummary string                 `json:"confirmed_summary,omitempty" jsonschema:"the summary to show the person word for word; send it back unchanged as confirmed_summary once they agree"`
	Missing          []string               `json:"missing,omitempty" jsonschema:"the confirmation fields absent or false"`
	Message          string                 `json:"message,omitempty" jsonschema:"what to do next"`
	Proposal         *CallbackProposal      `json:"proposal,omitempty" jsonschema:"confirmed_summary's facts, structured"`
	Callback         *mutation.CallbackView `json:"callback,omitempty" jsonschema:"the request as sent"`
	IdempotentReplay bool                   `json:"idempotent_replay,omitempty" jsonschema:"the stored answer of an earlier call with this idempotency_key; nothing changed now"`
	Notified         *Notified              `json:"notified,omitempty" jsonschema:"who is told: the business by e-mail and webhooks"`
	Error            *ToolError             `json:"error,omitempty" jsonschema:"present only when nothing was done"`
}

var callbackTool = &mcp.Tool{
	Name:  RequestBusinessCallback,
	Title: "Ask a business to contact the person",
	Description: "Ask a business to call or write back to the person — for a quote, a question the catalog does not answer, or when no open time suits them. " + protocolRef + `
Nothing is booked. The business is told by e-mail and webhook and answers at the person's account e-mail address, which the summary shows: never pass an address or phone number, the business only ever sees the verified one. To wait for a time to free up, use join_my_waitlist; to book, create_my_booking.
Done: status requested; callback with its callback_reference; notified (who was told). The request is on the person's Activity page.
Refusals: rate_limited (this connection sent its 5 requests of the hour: tell the person, or retry after retry_after_sec), business_not_bookable (the business takes no requests through agents: contact it directly), unknown_business, invalid_argument (field names it: topic missing or over 200 characters, notes or preferred_times over 500).`,
	OutputSchema: listedOutput[CallbackOutput](mutationStatuses(mutation.StatusRequested)...),
	Annotations:  mutating(),
}

func (t *toolSet) callback(ctx context.Context, req *mcp.CallToolRequest, in CallbackInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	in.BusinessReference = strings.TrimSpace(in.BusinessReference)
	if e := required("business_reference", in.BusinessReference, needBusinessReference); e != nil {
		return fail(e)
	}
	if e := required("topic", in.Topic, "topic is required: in a few words, what the person wants to talk about."); e != nil {
		return fail(e)
	}
	o, err := t.d.Handoffs.RequestCallback(ctx, agentCaller(ctx, c), mutation.CallbackRequest{BusinessRef: in.BusinessReference,
		Topic: in.Topic, PreferredTimes: in.PreferredTimes, Notes: in.Notes}, in.fields())
	if err != nil {
		return t.domainFail(ctx, RequestBusinessCallback, err)
	}
	out := CallbackOutput{Status: o.Status, ConfirmedSummary: o.Summary, Missing: o.Missing, IdempotentReplay: o.Replay}
	if o.Callback == nil {
		out.Message = o.Message
		if f := o.CallbackFacts; f != nil {
			out.Proposal = &CallbackProposal{BusinessReference: f.BusinessReference, BusinessName: f.BusinessName, Topic: f.Topic,
				PreferredTimes: f.PreferredTimes, Notes: f.Notes, ContactEmail: f.ContactEmail}
		}
		if o.Refused() {
			out.Error = toolError(problem.New(o.Status, o.Message))
			return &mcp.CallToolResult{IsError: true}, out, nil
		}
		return nil, out, nil
	}
	out.Callback, out.Message = o.Callback, "Sent. Tell the person the business will contact them at their account's e-mail address; nothing is booked."
	if o.Notified != nil {
		n := Notified(*o.Notified)
		out.Notified = &n
	}
	return nil, out, nil
}

// WaitlistInput are the arguments of join_my_waitlist.
type WaitlistInput struct {
	BusinessReference  string `json:"business_reference" jsonschema:"the business, from search_bookable_business"`
	ServiceReference   string `json:"service_reference" jsonschema:"the service, from check_business_availability's catalog"`
	FromLocalDate      string `json:"from_local_date" jsonschema:"first day of the window, YYYY-MM-DD in the business's time zone, today or later"`
	ToLocalDate        string `json:"to_local_date" jsonschema:"last day of the window (included), YYYY-MM-DD, within the business's booking horizon"`
	WithStaffReference string `json:"with_staff_reference,omitempty" jsonschema:"only this staff member, who must perform the service; omit for anyone"`
	EarliestLocalTime  string `json:"earliest_local_time,omitempty" jsonschema:"earliest start, HH:MM local; omit for the start of the day"`
	LatestLocalTime    string `json:"latest_local_time,omitempty" jsonschema:"latest end, HH:MM local (24:00 is midnight); omit for the end of the day"`
	ConfirmationInput
}

// WaitlistProposal is what joining's summary shows, structured.
type WaitlistProposal struct {
	BusinessReference string `json:"business_reference"`
	BusinessName      string `json:"business_name"`
	ServiceReference  string `json:"service_reference"`
	ServiceName       string `json:"service_name"`
	DurationMinutes   int    `json:"duration_minutes"`
	PriceCents        int64  `json:"price_cents" jsonschema:"minor units, paid at the business"`
	Currency          string `json:"currency"`
	StaffReference    string `json:"staff_reference,omitempty" jsonschema:"absent: anyone who performs the service"`
	StaffName         string `json:"staff_name,omitempty"`
	TimeZone          string `json:"timezone"`
	FromLocalDate     string `json:"from_local_date"`
	ToLocalDate       string `json:"to_local_date"`
	EarliestLocalTime string `json:"earliest_local_time"`
	LatestLocalTime   string `json:"latest_local_time"`
	OfferMinutes      int    `json:"offer_minutes" jsonschema:"how long a freed time is held for the person once offered"`
}

// WaitlistOutput is the answer of join_my_waitlist.
type WaitlistOutput struct {
	Status           string                `json:"status,omitempty" jsonschema:"where the request stands (server instructions): the first three changed nothing; waitlisted means on the list"`
	ConfirmedSummary string                `json:"confirmed_summary,omitempty" jsonschema:"the summary to show the person word for word; send it back unchanged as confirmed_summary once they agree"`
	Missing          []string              `json:"missing,omitempty" jsonschema:"the confirmation fields absent or false"`
	Message          string                `json:"message,omitempty" jsonschema:"what to do next"`
	Proposal         *WaitlistProposal     `json:"proposal,omitempty" jsonschema:"confirmed_summary's facts, structured"`
	Waitlist         *booking.WaitlistView `json:"waitlist,omitempty" jsonschema:"the waitlist entry"`
	IdempotentReplay bool                  `json:"idempotent_replay,omitempty" jsonschema:"the stored answer of an earlier call with this idempotency_key; nothing changed now"`
	Error            *ToolError            `json:"error,omitempty" jsonschema:"present only when nothing was done"`
}

var waitlistTool = &mcp.Tool{
	Name:  JoinMyWaitlist,
	Title: "Put the person on a business's waitlist",
	Description: "Put the person on a business's waitlist for a service, when no open time in check_business_availability suits them. " + protocolRef + `
Nothing is booked now. When a matching time frees up (someone cancels or moves) and the person is first in line, it is held for them for offer_minutes: they get an e-mail, and search_my_bookings status=waitlisted shows the entry with its offer. Book it with create_my_booking and offer_reference before held_until; unused, it passes to the next person and they stay on the list (they leave it on My bookings).
Done: status waitlisted; waitlist with its waitlist_reference and window.
Refusals: in_the_past (from_local_date is before today), beyond_booking_horizon (to_local_date is past the business's booking horizon), staff_service_mismatch (that staff member does not perform the service), unknown_business / unknown_service / unknown_staff (use the catalog's references), business_not_bookable, invalid_time (field names it), invalid_argument (to_local_date before from_local_date, or a time of day shorter than the service).`,
	OutputSchema: listedOutput[WaitlistOutput](mutationStatuses(mutation.StatusWaitlisted)...),
	Annotations:  mutating(),
}

func (t *toolSet) waitlist(ctx context.Context, req *mcp.CallToolRequest, in WaitlistInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	in.BusinessReference, in.ServiceReference = strings.TrimSpace(in.BusinessReference), strings.TrimSpace(in.ServiceReference)
	in.WithStaffReference = strings.TrimSpace(in.WithStaffReference)
	in.FromLocalDate, in.ToLocalDate = strings.TrimSpace(in.FromLocalDate), strings.TrimSpace(in.ToLocalDate)
	in.EarliestLocalTime, in.LatestLocalTime = strings.TrimSpace(in.EarliestLocalTime), strings.TrimSpace(in.LatestLocalTime)
	if e := required("business_reference", in.BusinessReference, needBusinessReference); e != nil {
		return fail(e)
	}
	if e := required("service_reference", in.ServiceReference, "service_reference is required: call check_business_availability with the business_reference to list the services."); e != nil {
		return fail(e)
	}
	if e := checkLocalDate("from_local_date", in.FromLocalDate); e != nil {
		return fail(e)
	}
	if e := checkLocalDate("to_local_date", in.ToLocalDate); e != nil {
		return fail(e)
	}
	o, err := t.d.Handoffs.JoinWaitlist(ctx, agentCaller(ctx, c), mutation.WaitlistRequest{BusinessRef: in.BusinessReference,
		ServiceRef: in.ServiceReference, StaffRef: in.WithStaffReference, FromDate: in.FromLocalDate, ToDate: in.ToLocalDate,
		Earliest: in.EarliestLocalTime, Latest: in.LatestLocalTime}, in.fields())
	if err != nil {
		return t.domainFail(ctx, JoinMyWaitlist, err)
	}
	out := WaitlistOutput{Status: o.Status, ConfirmedSummary: o.Summary, Missing: o.Missing, IdempotentReplay: o.Replay}
	if o.Waitlist == nil {
		out.Message = o.Message
		if f := o.WaitlistFacts; f != nil {
			out.Proposal = &WaitlistProposal{BusinessReference: f.BusinessReference, BusinessName: f.BusinessName,
				ServiceReference: f.ServiceReference, ServiceName: f.ServiceName, DurationMinutes: f.DurationMinutes,
				PriceCents: f.PriceCents, Currency: f.Currency, StaffReference: f.StaffReference, StaffName: f.StaffName,
				TimeZone: f.TimeZone, FromLocalDate: f.FromDate, ToLocalDate: f.ToDate, EarliestLocalTime: f.Earliest,
				LatestLocalTime: f.Latest, OfferMinutes: f.OfferMinutes}
		}
		if o.Refused() {
			out.Error = toolError(problem.New(o.Status, o.Message))
			return &mcp.CallToolResult{IsError: true}, out, nil
		}
		return nil, out, nil
	}
	out.Waitlist, out.Message = o.Waitlist, "On the waitlist. Tell the person they will get an e-mail when a matching time is held for them, and that nothing is booked until they book the offer."
	return nil, out, nil
}

// registerHandoffs adds request_business_callback and join_my_waitlist
// when the mutation service offers them.
func registerHandoffs(r registry, t *toolSet) {
	if t.d.Handoffs == nil {
		return
	}
	addTool(r, callbackTool, t.callback)
	addTool(r, waitlistTool, t.waitlist)
}

var referenceRE = regexp.MustCompile(ReferencePattern)

// myWaitlist answers search_my_bookings status=waitlisted.
func (t *toolSet) myWaitlist(ctx context.Context, c caller, limit, offset int) (*mcp.CallToolResult, any, error) {
	w, ok := t.d.Domain.(Waitlists)
	if !ok {
		return nil, MyBookingsOutput{Results: []BookingOut{}, Waitlist: []booking.WaitlistView{}}, nil
	}
	page, err := w.MyWaitlist(ctx, c.AccountID, limit, offset)
	if err != nil {
		return t.domainFail(ctx, SearchMyBookings, err)
	}
	return nil, MyBookingsOutput{Results: []BookingOut{}, Waitlist: page.Results, HasMore: page.HasMore, NextOffset: page.NextOffset}, nil
}
