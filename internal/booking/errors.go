package booking

import (
	"errors"
	"fmt"
)

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

// Error is a business failure that an agent can act on. Message always says
// what to do next. It is safe to show to a client: it never contains an
// internal detail.
type Error struct {
	Code          string `json:"code"`
	Message       string `json:"message"`
	Field         string `json:"field,omitempty"`           // the argument at fault, for invalid_argument / invalid_time
	BookingURL    string `json:"booking_url,omitempty"`     // deposit_required: where to finish on the web
	RetryAfterSec int    `json:"retry_after_sec,omitempty"` // reserved for rate limits
	wrapped       error
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap exposes the store sentinel behind the error, if any (store.ErrOverlap
// behind slot_taken, store.ErrConflict behind booking_changed).
func (e *Error) Unwrap() error { return e.wrapped }

// ErrorCode returns the code of a booking *Error in err's chain, or "" when
// err is nil or not a booking error (an internal failure).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// AsError returns the booking *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func newErr(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func fieldErr(code, field, format string, args ...any) *Error {
	e := newErr(code, format, args...)
	e.Field = field
	return e
}

func errBookingNotFound() *Error {
	return newErr(CodeBookingNotFound, "No booking of yours has that reference. Call search_my_bookings to list your bookings and their references.")
}
