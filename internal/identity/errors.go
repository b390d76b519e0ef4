package identity

import (
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
)

// Errors answered by the Service, as the one domain error type
// (internal/problem): errors.Is compares codes. Messages are sentences safe
// to show to the person as they are; the pages show them unchanged.
var (
	// ErrInvalidEmail: the address is not a plausible email address.
	ErrInvalidEmail = problem.New(problem.CodeInvalidEmail, "Enter a valid email address, such as name@example.com.")
	// ErrWeakPassword: a new password is refused; the message of the
	// error answered says why.
	ErrWeakPassword = problem.New(problem.CodeWeakPassword, "Choose a stronger password.")
	// ErrEmailUnavailable: sign-up with an address that already has an
	// account. Callers must answer it exactly like a successful sign-up.
	ErrEmailUnavailable = problem.New(problem.CodeEmailUnavailable, "This email address is unavailable.")
	// ErrInvalidCredentials: wrong email or password (indistinguishably).
	ErrInvalidCredentials = problem.New(problem.CodeInvalidCredentials, "The email address or password is not correct.")
	// ErrAccountDisabled: the password was right but an administrator
	// disabled the account.
	ErrAccountDisabled = problem.New(problem.CodeAccountDisabled, "This account is disabled; contact the Linkslot administrator.")
	// ErrThrottled: too many failed sign-ins; the error answered carries
	// the wait (RetryAfter reads it).
	ErrThrottled = problem.New(problem.CodeThrottled, "Too many failed sign-in attempts.")
	// ErrBusy: every password-hashing slot stayed busy for the admission
	// wait (password.AdmissionWait); nothing was checked or changed. Answer
	// 503 with Retry-After: a retry in a moment will usually get a slot.
	ErrBusy = problem.New(problem.CodeBusy, "Many people are signing in right now; try again in a moment.")
	// ErrNoSession: the session does not exist, has expired, or its
	// account is gone or disabled.
	ErrNoSession = problem.New(problem.CodeNoSession, "You are not signed in; sign in again.")
	// ErrNotFound: no such link of this account.
	ErrNotFound = problem.New(problem.CodeLinkNotFound, "This connected app was not found; it may have been disconnected already.")
)

// throttledFor is ErrThrottled saying when to try again: after wait,
// rounded up to whole seconds.
func throttledFor(wait time.Duration) error {
	e := ErrThrottled.WithMessage("Too many failed sign-in attempts; try again in %s.", HumanDuration(wait))
	e.RetryAfterSec = int((wait + time.Second - 1) / time.Second)
	return e
}

// RetryAfter reports how long a throttled attempt (ErrThrottled) must
// wait, and whether err is one.
func RetryAfter(err error) (time.Duration, bool) {
	if !errors.Is(err, ErrThrottled) {
		return 0, false
	}
	e, _ := problem.As(err)
	return time.Duration(e.RetryAfterSec) * time.Second, true
}

// HumanDuration formats a wait for a person: "45 seconds", "3 minutes".
func HumanDuration(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "1 second"
	case d < time.Minute:
		return fmt.Sprintf("%d seconds", int((d+time.Second-1)/time.Second))
	default:
		m := int((d + time.Minute - 1) / time.Minute)
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", m)
	}
}
