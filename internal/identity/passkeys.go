package identity

import "context"

// TopicPasskeyAdded is the mail topic of the notice that a passkey was
// added to an account (internal/passkey sends it).
const TopicPasskeyAdded = "passkey.added"

// AddressThrottled answers ErrThrottled (with the wait) when sign-ins from clientAddr
// must wait (the per-address key of the sign-in throttle), else nil. A
// passkey sign-in, which names no account before it is verified, is held
// to this key only.
func (s *Service) AddressThrottled(ctx context.Context, clientAddr string) error {
	now := s.clock()
	at, err := s.throttle.retryAt(ctx, "addr:"+clientAddr, s.throttle.policy.AddressLimit, now)
	if err != nil {
		return err
	}
	if !at.IsZero() {
		return throttledFor(at.Sub(now))
	}
	return nil
}

// CountAddressFailure counts a failed sign-in from clientAddr against the
// per-address key of the sign-in throttle (a passkey that did not verify).
func (s *Service) CountAddressFailure(ctx context.Context, clientAddr string) error {
	return s.throttle.fail(ctx, "addr:"+clientAddr, s.clock())
}

// Mailer returns the Mailer the Service queues account e-mail with (nil
// without one), for the services that tell of other account changes.
func (s *Service) Mailer() Mailer { return s.mailer }
