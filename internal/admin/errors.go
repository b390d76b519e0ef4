package admin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/linkslot/linkslot/internal/catalogfile"
)

// Errors the operations answer; test with errors.Is.
var (
	// ErrNotFound: no client, account or business by that name.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: the client id or email address is taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalid: the input was refused; errors.As an *InvalidError for
	// every problem.
	ErrInvalid = errors.New("invalid input")
	// ErrConflict: the change cannot be made in the record's current state
	// (rotating the secret of a public client, removing staff that still
	// has bookings).
	ErrConflict = errors.New("conflict")
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
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(path, msg string) error {
	return &InvalidError{Problems: []Problem{{Path: path, Message: msg}}}
}
