package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

// Domain is the part of the booking engine the read tools call;
// *booking.Service implements it.
type Domain interface {
	SearchBusinesses(ctx context.Context, query, city string, limit, offset int) (booking.BusinessPage, error)
	Catalog(ctx context.Context, businessRef string) (booking.CatalogView, error)
	Availability(ctx context.Context, q booking.AvailabilityQuery) (booking.Availability, error)
	MyBookings(ctx context.Context, accountID, status string, limit, offset int) (booking.BookingPage, error)
	MyBooking(ctx context.Context, accountID, bookingRef string) (booking.BookingView, error)
	RescheduleAvailability(ctx context.Context, accountID, bookingRef, localDate, staffRef string) (booking.Availability, error)
}

var _ Domain = (*booking.Service)(nil)

// Grants issues a booking's current grant bound to the asking link
// (internal/grant.Issuer).
type Grants interface {
	IssueFor(ctx context.Context, b store.Booking, linkID string) (string, error)
}

// Limiter is a per-key rate limit (internal/ratelimit: in process, or
// shared by the replicas through the database).
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
}

// Deps are the tools' dependencies.
type Deps struct {
	Domain Domain
	Grants Grants  // nil: booking answers carry no grant
	Links  Limiter // per-link limit; nil: unlimited
	Logger *slog.Logger
	// Metrics counts tool calls by outcome, bookings, replays and refused
	// grants (nil: off).
	Metrics *metrics.Metrics

	// Mutations is the mutation protocol (*mutation.Service); the mutation
	// tools are registered only when it is set.
	Mutations Mutations
	// Handoffs are its §16 operations (request_business_callback,
	// join_my_waitlist), registered only when set; New sets it to
	// Mutations when that implements them.
	Handoffs Handoffs

	// Uses records that a tool call used its link, at most once a minute
	// per link from this process (nil: not recorded); Clock is its time
	// (default time.Now).
	Uses  UseRecorder
	Clock func() time.Time
}

// Tool names.
const (
	SearchBookableBusiness     = "search_bookable_business"
	CheckBusinessAvailability  = "check_business_availability"
	SearchMyBookings           = "search_my_bookings"
	GetMyBooking               = "get_my_booking"
	CheckMyBookingAvailability = "check_my_booking_availability"
	CreateMyBooking            = "create_my_booking"
	RescheduleMyBooking        = "reschedule_my_booking"
	CancelMyBooking            = "cancel_my_booking"
)

// RequiredScope is the scope a tools/call of name needs: bookings:read for
// the read tools, bookings:write for the mutations. Unknown tools answer
// ok=false (the SDK then answers the call itself).
func RequiredScope(name string) (string, bool) {
	switch name {
	case SearchBookableBusiness, CheckBusinessAvailability, SearchMyBookings, GetMyBooking, CheckMyBookingAvailability:
		return scope.BookingsRead, true
	case CreateMyBooking, RescheduleMyBooking, CancelMyBooking, RequestBusinessCallback, JoinMyWaitlist:
		return scope.BookingsWrite, true
	}
	return "", false
}

// caller is who a tool call speaks for: the identity the router verified
// and put in the request's context (tokencheck.WithIdentity), which the
// SDK hands on to the handlers with the rest of the context's values.
type caller struct {
	AccountID, LinkID, ClientID string
}

func callerOf(ctx context.Context) (caller, bool) {
	id, ok := tokencheck.IdentityFrom(ctx)
	return caller{AccountID: id.AccountID, LinkID: id.LinkID, ClientID: id.ClientID}, ok
}

// ToolError is the "error" object of a failed tool result: a
// *problem.Error as the MCP edge writes it. What it adds is the edge's own:
// the descriptions each tool's declared output schema carries (pinned by
// the golden transcripts), and no Problems list. Handlers answer
// *problem.Error values; fail writes them as ToolError.
type ToolError struct {
	Code          string `json:"code"`
	Message       string `json:"message" jsonschema:"what to do next"`
	Field         string `json:"field,omitempty" jsonschema:"the argument at fault"`
	BookingURL    string `json:"booking_url,omitempty" jsonschema:"deposit_required: where the person finishes on the web"`
	RetryAfterSec int    `json:"retry_after_sec,omitempty" jsonschema:"seconds to wait before the same call"`
}

// errorOut is the structured content of every failed result.
type errorOut struct {
	Error *ToolError `json:"error"`
}

func fail(e *problem.Error) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true}, errorOut{Error: toolError(e)}, nil
}

// failedResult is a whole failed result for e, structured content and
// text, for the middleware that answers before a handler runs.
func failedResult(e *problem.Error) *mcp.CallToolResult {
	b, _ := json.Marshal(errorOut{Error: toolError(e)})
	return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// toolError is e as a tool result writes it.
func toolError(e *problem.Error) *ToolError {
	return &ToolError{Code: e.Code, Message: e.Message, Field: e.Field, BookingURL: e.BookingURL, RetryAfterSec: e.RetryAfterSec}
}

func invalidArg(field, format string, a ...any) *problem.Error {
	return &problem.Error{Code: problem.CodeInvalidArgument, Field: field, Message: fmt.Sprintf(format, a...)}
}

// toolSet carries the dependencies into the handlers.
type toolSet struct {
	d    Deps
	uses *useThrottle
}

// domainFail maps a domain error to a result: a *problem.Error is shown as
// is (its code, field and message are written for agents); anything else is
// logged and answered as server_error.
func (t *toolSet) domainFail(ctx context.Context, tool string, err error) (*mcp.CallToolResult, any, error) {
	if be, ok := problem.As(err); ok {
		return fail(be)
	}
	if errors.Is(err, store.ErrInvalidText) {
		return fail(invalidArg("", "An argument contains a character Linkslot cannot store (such as U+0000); remove control characters and retry."))
	}
	t.d.Logger.ErrorContext(ctx, "tool failed", "tool", tool, "err", err)
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return fail(&problem.Error{Code: problem.CodeServerError, RetryAfterSec: 2, Message: "Linkslot could not reach its database. Retry the same call in a few seconds."})
	}
	return fail(&problem.Error{Code: problem.CodeServerError, Message: "Something went wrong on Linkslot's side. Retry the same call once; if it fails again, tell the person Linkslot is having trouble."})
}

// begin starts every tool call: it identifies the caller from ctx (where
// the request id is too, from the HTTP request), applies the per-link
// rate limit and records the link's use (useThrottle).
func (t *toolSet) begin(ctx context.Context, req *mcp.CallToolRequest) (context.Context, caller, *problem.Error) {
	c, ok := callerOf(ctx)
	if !ok {
		// The router never lets an unauthenticated call through; this is
		// a wiring fault, not the agent's.
		return ctx, c, &problem.Error{Code: problem.CodeServerError, Message: "The call carried no verified identity. Reconnect the Linkslot account and retry."}
	}
	if t.d.Links != nil {
		key := c.LinkID
		if key == "" {
			key = "account:" + c.AccountID
		}
		if ok, after := t.d.Links.Allow(ctx, key); !ok {
			secs := int(after / time.Second)
			if secs < 1 {
				secs = 1
			}
			return ctx, c, &problem.Error{Code: problem.CodeRateLimited, RetryAfterSec: secs,
				Message: fmt.Sprintf("Too many calls through this connection. Wait %d seconds, then retry the same call.", secs)}
		}
	}
	t.uses.used(ctx, c.LinkID)
	return ctx, c, nil
}

var localDateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func checkLocalDate(field, v string) *problem.Error {
	if !localDateRE.MatchString(v) {
		return &problem.Error{Code: problem.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s must be a calendar date YYYY-MM-DD in the business's time zone (for example 2026-03-14); words like \"tomorrow\" are not accepted — work out the date first.", field)}
	}
	if _, err := time.Parse("2006-01-02", v); err != nil {
		return &problem.Error{Code: problem.CodeInvalidTime, Field: field,
			Message: fmt.Sprintf("%s %q is not a real calendar date; use YYYY-MM-DD.", field, v)}
	}
	return nil
}

func pageArgs(limit, offset *int) (int, int, *problem.Error) {
	l, o := 10, 0
	if limit != nil {
		if *limit < 1 || *limit > 50 {
			return 0, 0, invalidArg("limit", "limit must be between 1 and 50 (default 10).")
		}
		l = *limit
	}
	if offset != nil {
		if *offset < 0 {
			return 0, 0, invalidArg("offset", "offset must be 0 or more; pass the next_offset of the previous page.")
		}
		o = *offset
	}
	return l, o, nil
}

// What to tell an agent that left out a reference the tools keep asking for.
const (
	needBookingReference  = "booking_reference is required: get one from search_my_bookings."
	needBusinessReference = "business_reference is required: get one from search_bookable_business."
	needGrant             = "grant is required: call get_my_booking with the booking_reference and pass the grant it returns."
)

// required answers invalid_argument naming field when v is blank, with a
// message that tells the agent where to get the value.
func required(field, v, howToGetIt string) *problem.Error {
	if strings.TrimSpace(v) == "" {
		return &problem.Error{Code: problem.CodeInvalidArgument, Field: field, Message: howToGetIt}
	}
	return nil
}

// outputSchema infers T's schema and makes every top-level property
// optional, so that a failed result ({"error": {...}}) also matches it.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: output schema of %T: %v", *new(T), err))
	}
	s.Required = nil
	return s
}

func readOnly() *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f}
}

// NewServer returns the MCP server with every tool registered.
func NewServer(d Deps, impl *mcp.Implementation) *mcp.Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if impl == nil {
		impl = &mcp.Implementation{Name: "linkslot", Title: "Linkslot bookings", Version: "1.0.0"}
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: serverInstructions,
		Logger:       d.Logger,
	})
	Register(s, d)
	s.AddReceivingMiddleware(argumentErrors, controlChars, workDeadline)
	if d.Metrics != nil {
		s.AddReceivingMiddleware(instrument(d.Metrics))
	}
	return s
}

// Register adds the read tools to s, and the mutation tools when their
// dependencies are set.
func Register(s *mcp.Server, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if h, ok := d.Mutations.(Handoffs); ok && d.Handoffs == nil {
		d.Handoffs = h
	}
	t := &toolSet{d: d, uses: newUseThrottle(d.Uses, d.Clock, d.Logger)}
	r := registry{s: s, outputs: map[string]any{}, inputs: map[string]any{}}
	addTool(r, searchBusinessTool, t.searchBusiness)
	addTool(r, availabilityTool, t.availability)
	addTool(r, myBookingsTool, t.myBookings)
	addTool(r, myBookingTool, t.myBooking)
	addTool(r, myBookingAvailabilityTool, t.myBookingAvailability)
	registerMutations(r, t)
	registerHandoffs(r, t)
	s.AddReceivingMiddleware(r.listOutputSchemas)
}

// registry registers tools whose results the SDK does not check against
// their output schema on every call.
//
// mcp.AddTool, given a tool with an OutputSchema, marshals every result,
// unmarshals it again into a map, applies the schema's defaults, validates
// the map against the schema and marshals it once more: for a day of open
// times that was a quarter of the CPU of a check_business_availability call
// (and more than the booking engine's own work). The answers are Go structs
// whose schemas are inferred from the same types (outputSchema) and carry no
// defaults, so the check can only fail on a bug, and the tests make it on
// every answer they receive (rshttp's outputCheck). So each tool is added
// without its output schema — the SDK then validates and decodes the
// arguments exactly as before and marshals the result once — and the
// schema is put back into the tools/list answer, which is byte for byte
// what it was (the tools_list golden).
//
// Likewise each tool's input schema is listed with its constraints
// (listedInput) while the SDK validates the arguments against the plain
// inferred schema: the handlers enforce the listed constraints with the
// product's own messages (schema.go says why).
type registry struct {
	s       *mcp.Server
	outputs map[string]any // tool name → its declared output schema
	inputs  map[string]any // tool name → its declared input schema
}

func addTool[In any](r registry, t *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	bare := *t
	bare.OutputSchema = nil
	r.outputs[t.Name] = t.OutputSchema
	r.inputs[t.Name] = listedInput[In]()
	mcp.AddTool(r.s, &bare, marshalled(h))
}

// marshalled puts a handler's answer in the result itself, as the SDK
// would — structuredContent, and the same JSON as text when the handler
// wrote no content — but encoded by segmentio/encoding/json, which writes
// the same bytes as encoding/json (HTML escaped, map keys sorted) without
// reflecting over every field at each call or calling time.Time's
// MarshalJSON and re-scanning its output for each instant: a day of open
// times is hundreds of them. The SDK, handed no output value, then
// marshals nothing itself.
func marshalled[In any](h mcp.ToolHandlerFor[In, any]) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		res, out, err := h(ctx, req, in)
		if err != nil || out == nil {
			return res, out, err
		}
		b, err := fastjson.Marshal(out)
		if err != nil {
			return nil, nil, fmt.Errorf("marshaling output: %w", err)
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		res.StructuredContent = json.RawMessage(b)
		if res.Content == nil {
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
		}
		return res, nil, nil
	}
}

// listOutputSchemas puts every tool's output schema back into tools/list
// answers, and its listed input schema in, (on copies: the SDK keeps the listed tools).
func (r registry) listOutputSchemas(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok || lr == nil {
			return res, err
		}
		out := *lr
		out.Tools = make([]*mcp.Tool, len(lr.Tools))
		for i, t := range lr.Tools {
			if sch, ok := r.outputs[t.Name]; ok && t.OutputSchema == nil {
				c := *t
				c.OutputSchema = sch
				if in, ok := r.inputs[t.Name]; ok {
					c.InputSchema = in
				}
				t = &c
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}

// argumentErrors rewrites the SDK's own argument-validation failures
// (a result with isError and no structured content whose text starts with
// "validating \"arguments\"" or is a JSON unmarshal error) into
// invalid_argument results naming the field.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		r, ok := res.(*mcp.CallToolResult)
		if !ok || r == nil || !r.IsError || r.StructuredContent != nil || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok {
			return res, err
		}
		te := translateValidation(tc.Text)
		return failedResult(te), nil
	}
}

var (
	propRE     = regexp.MustCompile(`/properties/([A-Za-z0-9_]+)`)
	missingRE  = regexp.MustCompile(`missing properties?:? \[?"?([A-Za-z0-9_]+)`)
	unexpectRE = regexp.MustCompile(`unexpected (?:additional )?propert(?:y|ies):? \[?"?([A-Za-z0-9_]+)`)
	goFieldRE  = regexp.MustCompile(`(?:Go struct field|field) [A-Za-z0-9_]*\.?([a-z_][A-Za-z0-9_]*)`)
)

func translateValidation(msg string) *problem.Error {
	field := ""
	for _, re := range []*regexp.Regexp{missingRE, unexpectRE, propRE, goFieldRE} {
		if m := re.FindStringSubmatch(msg); m != nil {
			field = m[1]
			break
		}
	}
	switch {
	case missingRE.MatchString(msg) && field == "staff_reference":
		return invalidArg(field, "%s", staffReferenceRequired)
	case missingRE.MatchString(msg):
		return invalidArg(field, "%s is required; see the tool's input schema.", field)
	case unexpectRE.MatchString(msg):
		return invalidArg(field, "%s is not an argument of this tool; remove it and see the tool's input schema.", field)
	case field != "":
		return invalidArg(field, "%s has the wrong type or format; see the tool's input schema (numbers as JSON numbers, text as JSON strings).", field)
	}
	return invalidArg("", "The arguments do not match the tool's input schema: pass a JSON object with the documented fields.")
}
