package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Backends wrap driver errors into these once; callers use
// errors.Is.
var (
	// ErrNotFound: no record matches.
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists: a unique key is already taken.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrConflict: a conditional write lost a race, or the record changed
	// since it was read (a used code, a rotated refresh token, a version
	// mismatch).
	ErrConflict = errors.New("store: conflict")
	// ErrRetry: the database aborted the transaction as a deadlock victim
	// or for a serialization failure (PostgreSQL 40P01, 40001). Nothing
	// was committed and the whole transaction may run again. Such errors
	// are also ErrConflict (a race was lost).
	ErrRetry = errors.New("store: transaction aborted, may be retried")
	// ErrOverlap: a confirmed booking would overlap another confirmed booking
	// of the same staff member (buffers included). PostgreSQL reports it from
	// the exclusion constraint, SQLite from the serialized check.
	ErrOverlap = errors.New("store: booking overlaps another")
	// ErrUnavailable: the database could not be reached or timed out; the
	// request may be retried.
	ErrUnavailable = errors.New("store: database unavailable")
)

// InUseError: a catalog record cannot be removed while bookings refer to it
// (a staff member or a service dropped from a catalog that still has
// bookings). errors.Is(err, ErrConflict) holds.
type InUseError struct {
	Kind      string // "staff" or "service"
	Reference string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%v: %s %q still has bookings", ErrConflict, e.Kind, e.Reference)
}

// Is makes errors.Is(err, ErrConflict) hold.
func (e *InUseError) Is(target error) bool { return target == ErrConflict }
