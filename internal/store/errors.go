package store

import "errors"

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
	// ErrOverlap: a confirmed booking would overlap another confirmed booking
	// of the same staff member (buffers included). PostgreSQL reports it from
	// the exclusion constraint, SQLite from the serialized check.
	ErrOverlap = errors.New("store: booking overlaps another")
	// ErrUnavailable: the database could not be reached or timed out; the
	// request may be retried.
	ErrUnavailable = errors.New("store: database unavailable")
)
