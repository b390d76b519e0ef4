package admin

import (
	"github.com/linkslot/linkslot/internal/problem"
)

// The kinds of failure the operations answer, as the one domain error type
// (internal/problem): test with errors.Is, which compares codes; an
// operation's error is one of these with its own message and, where there
// is one, the field at fault.
var (
	// ErrNotFound: no client, account or business by that name.
	ErrNotFound = problem.New(problem.CodeNotFound, "not found")
	// ErrAlreadyExists: the client id or email address is taken.
	ErrAlreadyExists = problem.New(problem.CodeAlreadyExists, "already exists")
	// ErrInvalid: the input was refused; the *problem.Error's Problems
	// list every part at fault.
	ErrInvalid = problem.New(problem.CodeInvalidInput, "invalid input")
	// ErrConflict: the change cannot be made in the record's current state
	// (rotating the secret of a public client, removing staff that still
	// has bookings).
	ErrConflict = problem.New(problem.CodeConflict, "conflict")
)

// Problem is one refused part of an input, with its path when it has one
// (a catalog file path, or a field name such as redirect_uris).
type Problem = problem.Problem

// invalidInput refuses an input for every one of its problems: ErrInvalid
// (errors.Is holds) with the problems listed.
func invalidInput(problems ...Problem) error {
	return problem.Invalid(problem.CodeInvalidInput, ErrInvalid.Message, problems...)
}

func invalid(path, msg string) error {
	return invalidInput(Problem{Path: path, Message: msg})
}

// ProblemsOf returns every problem of a refused input (ErrInvalid with its
// problems listed), when err is one.
func ProblemsOf(err error) ([]Problem, bool) {
	if e, ok := problem.As(err); ok && e.Code == problem.CodeInvalidInput && len(e.Problems) > 0 {
		return e.Problems, true
	}
	return nil, false
}

// messageOf is the message of the *problem.Error in err (identity's
// sentences about an email address or password), or err's text.
func messageOf(err error) string {
	if e, ok := problem.As(err); ok {
		return e.Message
	}
	return err.Error()
}
