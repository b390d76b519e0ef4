package booking

import "github.com/linkslot/linkslot/internal/problem"

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
	return newErr(problem.CodeBookingNotFound, "No booking of yours has that reference. Call search_my_bookings to list your bookings and their references.")
}
