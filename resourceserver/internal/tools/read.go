package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/problem"
)

// ---- search_bookable_business ----

// SearchBusinessInput are the arguments of search_bookable_business.
type SearchBusinessInput struct {
	Query  string `json:"query" jsonschema:"free text matched against business names, categories, cities and service names, e.g. 'haircut' or 'dentist Lisbon'"`
	City   string `json:"city,omitempty" jsonschema:"optional city to narrow the search, e.g. 'Lisbon'"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"results per page"`
	Offset *int   `json:"offset,omitempty" jsonschema:"the previous page's next_offset"`
}

// SearchBusinessOutput is the answer of search_bookable_business.
type SearchBusinessOutput struct {
	Results    []booking.BusinessSummary `json:"results" jsonschema:"matching businesses that accept bookings made by agents, best match first"`
	HasMore    bool                      `json:"has_more" jsonschema:"true when another page exists"`
	NextOffset *int                      `json:"next_offset" jsonschema:"offset of the next page, or null"`
	Error      *ToolError                `json:"error,omitempty" jsonschema:"present only when the call failed"`
}

var searchBusinessTool = &mcp.Tool{
	Name:  SearchBookableBusiness,
	Title: "Search bookable businesses",
	Description: `Find businesses the person can book through Linkslot by free text — a business name, a kind of service, a city — optionally narrowed to city. Start here whenever the person names a business or a service: each result's business_reference is what check_business_availability and create_my_booking need. Only businesses that accept agent bookings are listed; one the person names that is not listed cannot be booked here (tell them to contact it directly). Paged: while has_more, call again with offset = next_offset.
Refusals: invalid_argument (field names the argument: fix it), rate_limited (wait retry_after_sec, then the same call).`,
	OutputSchema: listedOutput[SearchBusinessOutput](),
	Annotations:  readOnly(),
}

func (t *toolSet) searchBusiness(ctx context.Context, req *mcp.CallToolRequest, in SearchBusinessInput) (*mcp.CallToolResult, any, error) {
	ctx, _, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	if e := required("query", in.Query, "query is required: describe the business or service, e.g. 'haircut' or 'physiotherapy'."); e != nil {
		return fail(e)
	}
	limit, offset, e := pageArgs(in.Limit, in.Offset)
	if e != nil {
		return fail(e)
	}
	page, err := t.d.Domain.SearchBusinesses(ctx, strings.TrimSpace(in.Query), strings.TrimSpace(in.City), limit, offset)
	if err != nil {
		return t.domainFail(ctx, SearchBookableBusiness, err)
	}
	if page.Results == nil {
		page.Results = []booking.BusinessSummary{}
	}
	return nil, SearchBusinessOutput{Results: page.Results, HasMore: page.HasMore, NextOffset: page.NextOffset}, nil
}

// ---- check_business_availability ----

// AvailabilityInput are the arguments of check_business_availability.
type AvailabilityInput struct {
	BusinessReference  string `json:"business_reference" jsonschema:"the business, as returned by search_bookable_business"`
	ServiceReference   string `json:"service_reference,omitempty" jsonschema:"the service to find times for (from this tool's catalog answer); give it together with local_date"`
	LocalDate          string `json:"local_date,omitempty" jsonschema:"the day, in the business's time zone; with service_reference"`
	WithStaffReference string `json:"with_staff_reference,omitempty" jsonschema:"optional: only this staff member's times"`
}

// AvailabilityOutput is the answer of check_business_availability: the
// catalog (without a service and date) or the open times.
type AvailabilityOutput struct {
	TimeZone     string                `json:"timezone" jsonschema:"the business's IANA time zone; every instant below carries its UTC offset"`
	Catalog      *booking.CatalogView  `json:"catalog,omitempty" jsonschema:"present when no service_reference/local_date was given: the business, its services (duration, price, currency, deposit) and staff (who performs what)"`
	Availability *booking.Availability `json:"availability,omitempty" jsonschema:"present when service_reference and local_date were given: open start times per staff member"`
	Error        *ToolError            `json:"error,omitempty" jsonschema:"present only when the call failed"`
}

var availabilityTool = &mcp.Tool{
	Name:  CheckBusinessAvailability,
	Title: "Check a business's services and open times",
	Description: `Read a business's catalog, or its open times for one service on one day. With business_reference alone: its time zone, booking rules (minimum notice, horizon, cancellation window and fee), services (service_reference, duration, price, deposit) and staff (staff_reference, the services each performs); read it before asking for times. With service_reference and local_date too: that day's open start times per staff member (only with_staff_reference's when given); pass a slot's starts_at and staff_reference unchanged to create_my_booking. An empty list means nothing is open that day: try another date.
A listed time is not held: create_my_booking checks it again (slot_taken). A service that requires a deposit cannot be booked here (create_my_booking answers deposit_required with the web page to finish on). To move an existing booking use check_my_booking_availability instead: there the booking's own time counts as free.
Refusals: unknown_business / unknown_service / unknown_staff / staff_service_mismatch (use the catalog's references), business_not_bookable (contact the business directly), too_soon / beyond_booking_horizon / in_the_past (another date), invalid_time (local_date), invalid_argument, rate_limited.`,
	OutputSchema: listedOutput[AvailabilityOutput](),
	Annotations:  readOnly(),
}

func (t *toolSet) availability(ctx context.Context, req *mcp.CallToolRequest, in AvailabilityInput) (*mcp.CallToolResult, any, error) {
	ctx, _, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	if e := required("business_reference", in.BusinessReference, needBusinessReference); e != nil {
		return fail(e)
	}
	svc, day := strings.TrimSpace(in.ServiceReference), strings.TrimSpace(in.LocalDate)
	switch {
	case svc == "" && day == "":
		if strings.TrimSpace(in.WithStaffReference) != "" {
			return fail(invalidArg("service_reference", "with_staff_reference needs service_reference and local_date: give all three to list that person's times, or none of them for the catalog."))
		}
		cat, err := t.d.Domain.Catalog(ctx, strings.TrimSpace(in.BusinessReference))
		if err != nil {
			return t.domainFail(ctx, CheckBusinessAvailability, err)
		}
		stableCatalog(&cat)
		return nil, AvailabilityOutput{TimeZone: cat.Business.TimeZone, Catalog: &cat}, nil
	case svc == "":
		return fail(invalidArg("service_reference", "service_reference is required with local_date: call this tool with business_reference alone to list the services."))
	case day == "":
		return fail(invalidArg("local_date", "local_date (YYYY-MM-DD in the business's time zone) is required with service_reference."))
	}
	if e := checkLocalDate("local_date", day); e != nil {
		return fail(e)
	}
	av, err := t.d.Domain.Availability(ctx, booking.AvailabilityQuery{
		BusinessRef: strings.TrimSpace(in.BusinessReference), ServiceRef: svc, LocalDate: day,
		StaffRef: strings.TrimSpace(in.WithStaffReference),
	})
	if err != nil {
		return t.domainFail(ctx, CheckBusinessAvailability, err)
	}
	return nil, AvailabilityOutput{TimeZone: av.TimeZone, Availability: &av}, nil
}

// ---- booking answers ----

// BookingOut is one of the person's bookings with its current grant.
type BookingOut struct {
	booking.BookingView
	Grant string `json:"grant,omitempty" jsonschema:"the booking's current grant: pass it unchanged to reschedule_my_booking or cancel_my_booking; it changes after every change to the booking"`
}

func (t *toolSet) withGrant(ctx context.Context, c caller, v booking.BookingView) BookingOut {
	out := BookingOut{BookingView: v}
	if t.d.Grants == nil || v.Status == "cancelled" || c.LinkID == "" {
		return out
	}
	g, err := t.d.Grants.IssueFor(ctx, v.Record, c.LinkID)
	if err != nil {
		t.d.Logger.WarnContext(ctx, "issue booking grant", "booking", v.Reference, "err", err)
		return out
	}
	out.Grant = g
	return out
}

// ---- search_my_bookings ----

// MyBookingsInput are the arguments of search_my_bookings.
type MyBookingsInput struct {
	Status string `json:"status,omitempty" jsonschema:"upcoming (default): not yet started, confirmed or pending, soonest first; pending: waiting for the business to accept by respond_by, the time held; past: started, not cancelled; cancelled: cancelled or declined; all; waitlisted: the person's waitlist entries, in waitlist instead of results. All but upcoming list the latest first"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"results per page"`
	Offset *int   `json:"offset,omitempty" jsonschema:"the previous page's next_offset"`
}

// MyBookingsOutput is the answer of search_my_bookings.
type MyBookingsOutput struct {
	Results    []BookingOut           `json:"results" jsonschema:"the person's bookings; upcoming soonest first, others latest first"`
	Waitlist   []booking.WaitlistView `json:"waitlist,omitempty" jsonschema:"status waitlisted: the person's waitlist entries, oldest first, each with its live offer (results is then empty)"`
	HasMore    bool                   `json:"has_more" jsonschema:"true when another page exists"`
	NextOffset *int                   `json:"next_offset" jsonschema:"offset of the next page, or null"`
	Error      *ToolError             `json:"error,omitempty" jsonschema:"present only when the call failed"`
}

var myBookingsTool = &mcp.Tool{
	Name:  SearchMyBookings,
	Title: "List the person's bookings",
	Description: `List the person's own bookings (never anyone else's), filtered by status. Each carries booking_reference, business, service, staff, times with the business's UTC offset, price, status and its current grant (none once cancelled or declined). status=waitlisted lists the entries from join_my_waitlist, each with the offer held for the person if any: book it with create_my_booking and its offer_reference. Use it to find a booking; to show one booking before changing it, call get_my_booking, which also returns its current grant. Paged: while has_more, call again with offset = next_offset.
Refusals: invalid_argument (field names the argument: fix it), rate_limited (wait retry_after_sec, then the same call).`,
	OutputSchema: listedOutput[MyBookingsOutput](),
	Annotations:  readOnly(),
}

func (t *toolSet) myBookings(ctx context.Context, req *mcp.CallToolRequest, in MyBookingsInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	status := strings.ToLower(strings.TrimSpace(in.Status))
	switch status {
	case "":
		status = "upcoming"
	case "upcoming", "past", "cancelled", "pending", "all", "waitlisted":
	default:
		return fail(invalidArg("status", "status must be upcoming, past, cancelled, pending, waitlisted or all."))
	}
	limit, offset, e := pageArgs(in.Limit, in.Offset)
	if e != nil {
		return fail(e)
	}
	if status == "waitlisted" {
		return t.myWaitlist(ctx, c, limit, offset)
	}
	page, err := t.d.Domain.MyBookings(ctx, c.AccountID, status, limit, offset)
	if err != nil {
		return t.domainFail(ctx, SearchMyBookings, err)
	}
	out := MyBookingsOutput{Results: make([]BookingOut, 0, len(page.Results)), HasMore: page.HasMore, NextOffset: page.NextOffset}
	for _, v := range page.Results {
		out.Results = append(out.Results, t.withGrant(ctx, c, v))
	}
	return nil, out, nil
}

// ---- get_my_booking ----

// MyBookingInput are the arguments of get_my_booking.
type MyBookingInput struct {
	BookingReference string `json:"booking_reference" jsonschema:"the booking, as returned by search_my_bookings or create_my_booking"`
}

// MyBookingOutput is the answer of get_my_booking.
type MyBookingOutput struct {
	Booking *BookingOut `json:"booking,omitempty" jsonschema:"the booking with its current grant"`
	Error   *ToolError  `json:"error,omitempty" jsonschema:"present only when the call failed"`
}

var myBookingTool = &mcp.Tool{
	Name:  GetMyBooking,
	Title: "Get one of the person's bookings",
	Description: `Fetch one of the person's bookings by booking_reference: status, business, service, staff, times with the business's UTC offset, price, notes, cancellation policy and fee, and its current grant. Call it right before reschedule_my_booking or cancel_my_booking: to show the person what will change, and for the grant they require (a grant stops working after every change, so take the newest). To find a booking_reference, use search_my_bookings.
Refusals: booking_not_found (no booking of this person has that reference: list them with search_my_bookings), invalid_argument (fix the field it names), rate_limited (wait retry_after_sec).`,
	OutputSchema: listedOutput[MyBookingOutput](),
	Annotations:  readOnly(),
}

func (t *toolSet) myBooking(ctx context.Context, req *mcp.CallToolRequest, in MyBookingInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	if e := required("booking_reference", in.BookingReference, needBookingReference); e != nil {
		return fail(e)
	}
	v, err := t.d.Domain.MyBooking(ctx, c.AccountID, strings.TrimSpace(in.BookingReference))
	if err != nil {
		return t.domainFail(ctx, GetMyBooking, err)
	}
	b := t.withGrant(ctx, c, v)
	return nil, MyBookingOutput{Booking: &b}, nil
}

// ---- check_my_booking_availability ----

// MyBookingAvailabilityInput are the arguments of check_my_booking_availability.
type MyBookingAvailabilityInput struct {
	BookingReference   string `json:"booking_reference" jsonschema:"the booking to move, from search_my_bookings"`
	LocalDate          string `json:"local_date" jsonschema:"the day, in the business's time zone"`
	WithStaffReference string `json:"with_staff_reference,omitempty" jsonschema:"optional: another staff member to move to; default the booking's own"`
}

// MyBookingAvailabilityOutput is the answer of check_my_booking_availability.
type MyBookingAvailabilityOutput struct {
	TimeZone     string                `json:"timezone" jsonschema:"the business's IANA time zone"`
	Availability *booking.Availability `json:"availability,omitempty" jsonschema:"the times this booking can move to on that day; the booking's own time does not block them"`
	Error        *ToolError            `json:"error,omitempty" jsonschema:"present only when the call failed"`
}

var myBookingAvailabilityTool = &mcp.Tool{
	Name:  CheckMyBookingAvailability,
	Title: "Check times one of the person's bookings can move to",
	Description: `List the times one of the person's bookings can move to on local_date: same service, same staff member unless with_staff_reference names another, and the booking's own time counts as free. Use it before reschedule_my_booking (pass a chosen starts_at as requested_starts_at); for a new booking use check_business_availability instead. A listed time is not held.
It refuses up front, with the code the move itself would meet, a booking that cannot move: already_cancelled (create a new booking instead), in_the_past (it has started: contact the business), payment_active (a payment or deposit hold: change it with the business), business_not_bookable (contact the business). What it lists, reschedule_my_booking accepts with the booking's current grant, unless someone takes the time first (slot_taken).
Other refusals: booking_not_found (list with search_my_bookings), unknown_staff / staff_service_mismatch (use the catalog's staff), too_soon / beyond_booking_horizon (another date), invalid_time (local_date), invalid_argument, rate_limited.`,
	OutputSchema: listedOutput[MyBookingAvailabilityOutput](),
	Annotations:  readOnly(),
}

func (t *toolSet) myBookingAvailability(ctx context.Context, req *mcp.CallToolRequest, in MyBookingAvailabilityInput) (*mcp.CallToolResult, any, error) {
	ctx, c, e := t.begin(ctx, req)
	if e != nil {
		return fail(e)
	}
	if e := required("booking_reference", in.BookingReference, needBookingReference); e != nil {
		return fail(e)
	}
	day := strings.TrimSpace(in.LocalDate)
	if day == "" {
		return fail(&problem.Error{Code: problem.CodeInvalidTime, Field: "local_date", Message: "local_date (YYYY-MM-DD in the business's time zone) is required."})
	}
	if e := checkLocalDate("local_date", day); e != nil {
		return fail(e)
	}
	av, err := t.d.Domain.RescheduleAvailability(ctx, c.AccountID, strings.TrimSpace(in.BookingReference), day, strings.TrimSpace(in.WithStaffReference))
	if err != nil {
		return t.domainFail(ctx, CheckMyBookingAvailability, err)
	}
	return nil, MyBookingAvailabilityOutput{TimeZone: av.TimeZone, Availability: &av}, nil
}

// stableCatalog sorts the cross-reference lists, whose order the store does
// not define, so that equal catalogs answer byte-identical JSON.
func stableCatalog(c *booking.CatalogView) {
	for i := range c.Services {
		c.Services[i].StaffReferences = slices.Sorted(slices.Values(c.Services[i].StaffReferences))
	}
	for i := range c.Staff {
		c.Staff[i].ServiceReferences = slices.Sorted(slices.Values(c.Staff[i].ServiceReferences))
	}
}
