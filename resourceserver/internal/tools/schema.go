package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/problem"
)

// The schemas tools/list declares (docs/tool-descriptions.md): the shapes
// inferred from the Go types, plus the constraints an agent should know
// before calling — enums, patterns, formats, lengths, ranges — and output
// schemas whose shared parts (the error object, a booking) are written once
// as $defs and referred to.
//
// Input constraints are listed, not handed to the SDK: the SDK validates
// arguments against the schema a tool is registered with (the plain
// inferred one, types and required properties only), and the handlers
// check every listed constraint themselves, so that a value outside one
// answers invalid_argument or invalid_time naming the field with the
// product's own message (docs/reference.md §4) rather than a schema
// validator's. TestListedInputConstraintsAreEnforced holds that every
// listed constraint is one a handler enforces.

// ErrorCodes are the codes a failed tool result's error.code may carry
// (docs/reference.md §5 "Error codes"): the enum of every output schema's
// error object. A tool that answers a new code adds it here.
var ErrorCodes = []string{
	problem.CodeInvalidArgument, problem.CodeInvalidTime, problem.CodeUnknownBusiness, problem.CodeUnknownService,
	problem.CodeUnknownStaff, problem.CodeStaffServiceMismatch, problem.CodeBusinessNotBookable, problem.CodeSlotTaken,
	problem.CodeTooSoon, problem.CodeBeyondHorizon, problem.CodeInThePast, problem.CodeDepositRequired,
	problem.CodePaymentActive, problem.CodeBookingNotFound, problem.CodeAlreadyCancelled, problem.CodeCancellationClosed,
	problem.CodeInvalidGrant, problem.CodeExpiredGrant, problem.CodeConfirmationRequired, problem.CodeSummaryChanged,
	problem.CodeMissingIdempotencyKey, problem.CodeInvalidIdempotencyKey, problem.CodeIdempotencyConflict,
	problem.CodeRateLimited, problem.CodeServerError,
	problem.CodeOfferNotFound, problem.CodeOfferOtherLink, problem.CodeOfferLapsed, problem.CodeOfferMismatch,
}

// MyBookingStatuses are search_my_bookings' status values.
var MyBookingStatuses = []string{"upcoming", "pending", "past", "cancelled", "waitlisted", "all"}

// Patterns of the listed input schemas.
const (
	// ReferencePattern is the shape of every reference Linkslot issues
	// (business, service, staff: internal/catalogfile; booking:
	// booking.NewReference). A value of another shape is never a known
	// reference: it answers unknown_business, unknown_service,
	// unknown_staff or booking_not_found.
	ReferencePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`
	// LocalDatePattern is a calendar date, YYYY-MM-DD.
	LocalDatePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	// InstantPattern is an RFC 3339 date-time with its offset
	// (booking.ParseInstant).
	InstantPattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`
	// IdempotencyKeyPattern is printable ASCII, space included
	// (internal/confirm).
	IdempotencyKeyPattern = `^[ -~]+$`
	// LocalTimePattern is a time of day, HH:MM on the 24-hour clock, 24:00
	// being the end of the day (join_my_waitlist).
	LocalTimePattern = `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`
)

// argRules are the listed constraints of every argument, by name: one
// meaning per name across the tools.
var argRules = map[string]func(s *jsonschema.Schema){
	"business_reference":   reference,
	"service_reference":    reference,
	"staff_reference":      reference,
	"with_staff_reference": reference,
	"booking_reference":    reference,
	"local_date":           localDate,
	// §16's arguments, named by docs/reference.md §4 (join_my_waitlist,
	// create_my_booking's offer_reference): listed here so that the tools
	// that add them list the same constraints.
	"offer_reference":     reference,
	"from_local_date":     localDate,
	"to_local_date":       localDate,
	"earliest_local_time": localTime,
	"latest_local_time":   localTime,
	"starts_at":           instantArg,
	"requested_starts_at": instantArg,
	"query":               func(s *jsonschema.Schema) { s.MinLength = ptr(1) },
	"city":                func(*jsonschema.Schema) {}, // free text: an unknown city finds nothing
	"grant":               func(s *jsonschema.Schema) { s.MinLength = ptr(1) },
	"limit": func(s *jsonschema.Schema) {
		s.Minimum, s.Maximum, s.Default = ptr(1.0), ptr(50.0), json.RawMessage("10")
	},
	"offset": func(s *jsonschema.Schema) { s.Minimum, s.Default = ptr(0.0), json.RawMessage("0") },
	"status": func(s *jsonschema.Schema) {
		s.Enum, s.Default = anys(MyBookingStatuses), json.RawMessage(`"upcoming"`)
	},
	"topic":                  func(s *jsonschema.Schema) { s.MinLength, s.MaxLength = ptr(1), ptr(booking.MaxTopic) },
	"preferred_times":        func(s *jsonschema.Schema) { s.MaxLength = ptr(500) },
	"notes":                  func(s *jsonschema.Schema) { s.MaxLength = ptr(500) },
	"reason":                 func(s *jsonschema.Schema) { s.MaxLength = ptr(500) },
	"confirmed_summary":      func(s *jsonschema.Schema) { s.MinLength = ptr(1) },
	"user_confirmation_text": func(s *jsonschema.Schema) { s.MinLength, s.MaxLength = ptr(1), ptr(500) },
	"idempotency_key": func(s *jsonschema.Schema) {
		s.MinLength, s.MaxLength, s.Pattern = ptr(16), ptr(200), IdempotencyKeyPattern
	},
}

func reference(s *jsonschema.Schema) { s.Pattern = ReferencePattern }

func localDate(s *jsonschema.Schema) { s.Pattern, s.Format = LocalDatePattern, "date" }

func localTime(s *jsonschema.Schema) { s.Pattern = LocalTimePattern }

func instantArg(s *jsonschema.Schema) { s.Pattern, s.Format = InstantPattern, "date-time" }

func ptr[T any](v T) *T { return &v }

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// listedInput is In's schema as tools/list declares it: inferred, with
// argRules applied. Every property must have a rule or be a boolean: a
// new argument is a decision about its constraints.
func listedInput[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: input schema of %T: %v", *new(In), err))
	}
	for name, p := range s.Properties {
		if rule, ok := argRules[name]; ok {
			rule(p)
			continue
		}
		if p.Type != "boolean" && !hasType(p, "boolean") {
			panic(fmt.Sprintf("tools: argument %s of %T has no listed constraints (argRules)", name, *new(In)))
		}
	}
	return s
}

func hasType(s *jsonschema.Schema, t string) bool {
	for _, x := range s.Types {
		if x == t {
			return true
		}
	}
	return false
}

// The shared output definitions, written once here and carried as $defs by
// every output schema that uses them ("#/$defs/error", "#/$defs/booking").
// MCP lists each tool with a self-contained schema (a client resolves no
// reference outside it), so each tool carries the definitions it refers
// to, once.
var (
	errorDef   = errorSchema()
	bookingDef = bookingSchema()
)

func errorSchema() *jsonschema.Schema {
	s, err := jsonschema.For[ToolError](nil)
	if err != nil {
		panic(err)
	}
	s.Description = "present only when the call failed; nothing changed"
	s.Properties["code"].Enum = anys(ErrorCodes)
	return s
}

func bookingSchema() *jsonschema.Schema {
	s, err := jsonschema.For[BookingOut](nil)
	if err != nil {
		panic(err)
	}
	instants(s)
	s.Properties["booking_reference"].Pattern = ReferencePattern
	return s
}

// instants marks every *_at property of s (and of its objects) as an RFC
// 3339 date-time.
func instants(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if strings.HasSuffix(name, "_at") && (p.Type == "string" || hasType(p, "string")) {
			p.Format = "date-time"
		}
		instants(p)
		instants(p.Items)
	}
	instants(s.Items)
}

// listedOutput is T's schema as tools/list declares it: every top-level
// property optional (a failed result is {"error": {...}}), the error object
// and bookings as references to the shared definitions, instants as
// date-times, and status limited to statuses when given.
func listedOutput[T any](statuses ...string) *jsonschema.Schema {
	s := outputSchema[T]()
	instants(s)
	defs := map[string]*jsonschema.Schema{}
	ref := func(name string, def *jsonschema.Schema, desc string) *jsonschema.Schema {
		defs[name] = def
		return &jsonschema.Schema{Ref: "#/$defs/" + name, Description: desc}
	}
	for name, p := range s.Properties {
		switch {
		case name == "error":
			s.Properties[name] = ref("error", errorDef, "")
		case name == "booking":
			s.Properties[name] = ref("booking", bookingDef, p.Description)
		case name == "results" && p.Items != nil && p.Items.Properties["grant"] != nil:
			p.Items = ref("booking", bookingDef, "")
		}
	}
	if len(statuses) > 0 {
		s.Properties["status"].Enum = anys(statuses)
	}
	s.Defs = defs
	return s
}
