package identity

import (
	"errors"
	"fmt"
	"time"
)

// Errors answered by the Service. Messages are safe to show to the person.
var (
	// ErrInvalidEmail: the address is not a plausible email address.
	ErrInvalidEmail = errors.New("enter a valid email address, such as name@example.com")
	// ErrWeakPassword wraps the reason a new password is refused.
	ErrWeakPassword = errors.New("choose a stronger password")
	// ErrEmailUnavailable: sign-up with an address that already has an
	// account. Callers must answer it exactly like a successful sign-up.
	ErrEmailUnavailable = errors.New("identity: email address unavailable")
	// ErrInvalidCredentials: wrong email or password (indistinguishably).
	ErrInvalidCredentials = errors.New("the email address or password is not correct")
	// ErrAccountDisabled: the password was right but an administrator
	// disabled the account.
	ErrAccountDisabled = errors.New("this account is disabled; contact the Linkslot administrator")
	// ErrThrottled: too many failed sign-ins; errors.As a *ThrottledError
	// for the time to retry.
	ErrThrottled = errors.New("too many failed sign-in attempts")
	// ErrBusy: every password-hashing slot stayed busy for the admission
	// wait (password.AdmissionWait); nothing was checked or changed. Answer
	// 503 with Retry-After: a retry in a moment will usually get a slot.
	ErrBusy = errors.New("many people are signing in right now; try again in a moment")
	// ErrNoSession: the session does not exist, has expired, or its
	// account is gone or disabled.
	ErrNoSession = errors.New("identity: no valid session")
	// ErrNotFound: no such link of this account.
	ErrNotFound = errors.New("identity: not found")
)

// ThrottledError reports when a throttled sign-in may be tried again.
type ThrottledError struct {
	RetryAt    time.Time
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed sign-in attempts; try again in %s", HumanDuration(e.RetryAfter))
}

// Is makes errors.Is(err, ErrThrottled) true.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

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
