package booking

import "github.com/linkslot/linkslot/internal/problem"

// Error codes answered by the booking engine (CONTRACT §5 "Error codes").
const (
	CodeInvalidArgument      = "invalid_argument"
	CodeInvalidTime          = "invalid_time"
	CodeUnknownBusiness      = "unknown_business"
	CodeUnknownService       = "unknown_service"
	CodeUnknownStaff         = "unknown_staff"
	CodeStaffServiceMismatch = "staff_service_mismatch"
	CodeBusinessNotBookable  = "business_not_bookable"
	CodeSlotTaken            = "slot_taken"
	CodeTooSoon              = "too_soon"
	CodeBeyondHorizon        = "beyond_booking_horizon"
	CodeInThePast            = "in_the_past"
	CodeDepositRequired      = "deposit_required"
	CodePaymentActive        = "payment_active"
	CodeBookingNotFound      = "booking_not_found"
	CodeAlreadyCancelled     = "already_cancelled"
	CodeCancellationClosed   = "cancellation_closed"
	// CodeBookingChanged: the booking changed (another mutation bumped its
	// version) between the plan and the execution. Not in the contract's
	// list on its own: the MCP layer normally sees it only when two
	// mutations of one booking race, and may answer it as summary_changed
	// or invalid_grant. It wraps store.ErrConflict.
	CodeBookingChanged = "booking_changed"
)

// Error is a business failure that an agent can act on: the one domain
// error type (internal/problem). Message always says what to do next; it
// never contains an internal detail. It wraps the store sentinel behind it,
// if any (store.ErrOverlap behind slot_taken, store.ErrConflict behind
// booking_changed).
type Error = problem.Error

// ErrorCode returns the code of a booking *Error in err's chain, or "" when
// err is nil or not a booking error (an internal failure).
func ErrorCode(err error) string { return problem.CodeOf(err) }

// AsError returns the booking *Error in err's chain.
func AsError(err error) (*Error, bool) { return problem.As(err) }

func newErr(code, format string, args ...any) *Error {
	return problem.Newf(code, format, args...)
}

func fieldErr(code, field, format string, args ...any) *Error {
	e := newErr(code, format, args...)
	e.Field = field
	return e
}

func errBookingNotFound() *Error {
	return newErr(CodeBookingNotFound, "No booking of yours has that reference. Call search_my_bookings to list your bookings and their references.")
}
