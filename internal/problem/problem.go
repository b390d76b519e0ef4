// Package problem is Linkslot's one domain error type: a failure a caller
// can act on, with a machine-readable code, the field at fault when there
// is one, and a message written for whoever reads it (an agent, a person,
// an administrator). The booking engine, grants, confirmations,
// idempotency keys and the admin service all answer *Error; front ends
// render Code, Field and Message as they are and never cut a code out of a
// message. Anything that is not an *Error is an internal failure: logged,
// and answered as server_error.
//
// Errors compare by code: errors.Is(err, grant.ErrInvalidGrant) holds for
// every *Error with code invalid_grant, whatever its message, so a package
// may declare its failures as values and refine them (WithField, Wrap)
// without breaking anyone's errors.Is.
//
// An input refused for several reasons at once (a client registration, a
// catalog file) is one *Error whose Problems list every part at fault with
// its path. Every code is defined in codes.go.
package problem

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a failure a caller can act on. It is safe to show: it never
// carries an internal detail (what it wraps is for errors.Is and logs).
type Error struct {
	Code          string `json:"code"`
	Message       string `json:"message"`
	Field         string `json:"field,omitempty"`           // the input at fault
	BookingURL    string `json:"booking_url,omitempty"`     // deposit_required: where to finish on the web
	RetryAfterSec int    `json:"retry_after_sec,omitempty"` // rate_limited: seconds to wait
	// Problems lists every refused part of an input (a client
	// registration, a catalog file, an admin form), each with its path.
	Problems []Problem `json:"problems,omitempty"`
	wrapped  error
}

// Problem is one refused part of an input: its path (a field such as
// redirect_uris, or a place in a file such as
// businesses[2].staff[0].hours.monday[1]; empty for the input as a whole)
// and what is wrong, in plain language.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Invalid returns an *Error with code and message listing problems.
func Invalid(code, message string, problems ...Problem) *Error {
	return &Error{Code: code, Message: message, Problems: problems}
}

// New returns an *Error with code and message.
func New(code, message string) *Error { return &Error{Code: code, Message: message} }

// Newf returns an *Error with code and a formatted message.
func Newf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error is "code: message"; with problems, the message and every problem,
// one per line when there are several, so a command line prints a
// readable list.
func (e *Error) Error() string {
	switch len(e.Problems) {
	case 0:
		return e.Code + ": " + e.Message
	case 1:
		return e.Message + ": " + e.Problems[0].String()
	}
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("%s, %d problems:\n  %s", e.Message, len(parts), strings.Join(parts, "\n  "))
}

// Unwrap exposes what the error wraps (a store sentinel), if anything.
func (e *Error) Unwrap() error { return e.wrapped }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// WithField returns a copy of e naming field.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// WithMessage returns a copy of e with another message (the same code).
func (e *Error) WithMessage(format string, args ...any) *Error {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// Wrap returns a copy of e wrapping err, for errors.Is and logs.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.wrapped = err
	return &c
}

// As returns the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// CodeOf returns the code of the *Error in err's chain, or "" when err is
// nil or an internal failure.
func CodeOf(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return ""
}
