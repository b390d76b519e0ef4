package admin

import (
	"fmt"
	"strings"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
)

// Codes of the errors below.
const (
	CodeNotFound      = "not_found"
	CodeAlreadyExists = "already_exists"
	CodeInvalid       = "invalid_input"
	CodeConflict      = "conflict"
)

// The kinds of failure the operations answer, as the one domain error type
// (internal/problem): test with errors.Is, which compares codes; an
// operation's error is one of these with its own message and, where there
// is one, the field at fault.
var (
	// ErrNotFound: no client, account or business by that name.
	ErrNotFound = problem.New(CodeNotFound, "not found")
	// ErrAlreadyExists: the client id or email address is taken.
	ErrAlreadyExists = problem.New(CodeAlreadyExists, "already exists")
	// ErrInvalid: the input was refused; errors.As an *InvalidError for
	// every problem.
	ErrInvalid = problem.New(CodeInvalid, "invalid input")
	// ErrConflict: the change cannot be made in the record's current state
	// (rotating the secret of a public client, removing staff that still
	// has bookings).
	ErrConflict = problem.New(CodeConflict, "conflict")
)

// Problem is one refused part of an input, with its path when it has one
// (a catalog file path, or a field name such as redirect_uris).
type Problem = catalogfile.Problem

// InvalidError lists every problem of a refused input.
type InvalidError struct {
	Problems []Problem
}

// Error lists the problems, one per line when there are several, so the
// command line prints a readable list.
func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	if len(parts) == 1 {
		return "invalid input: " + parts[0]
	}
	return fmt.Sprintf("invalid input, %d problems:\n  %s", len(parts), strings.Join(parts, "\n  "))
}

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Is(target error) bool { return problem.CodeOf(target) == CodeInvalid }

func invalid(path, msg string) error {
	return &InvalidError{Problems: []Problem{{Path: path, Message: msg}}}
}
