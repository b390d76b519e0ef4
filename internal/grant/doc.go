// Package grant issues and verifies booking grants: the signed capability an
// agent must present to reschedule or cancel a booking (docs/reference.md §5).
//
// A grant is a compact JWS (ES256, github.com/go-jose/go-jose/v4) whose
// protected header names the signing key ("kid") and the type
// "linkslot-grant+jwt", and whose payload binds it to one booking: the
// booking id and reference, the business, the link that made or manages the
// booking, the booking's version and the scopes booking:reschedule and
// booking:cancel. It expires at the appointment start. Because every
// successful mutation bumps the booking version, every earlier grant dies the
// moment the booking changes; the answer of that mutation carries a new one.
//
// Keys come from a KeySource (internal/keys.Manager with its own purpose), so
// grants rotate like the token keys: the newest key signs, and every key
// still published in VerificationKeys verifies, so a grant signed before a
// rotation stays valid until it expires or is superseded.
//
// Verify answers exactly two errors. ErrInvalidGrant covers a malformed,
// tampered or unsigned token, an algorithm other than ES256 (alg "none" and
// the HS* family are refused by the parser), an unknown kid, a wrong type, and
// a grant for another booking, business or link, of an older version, or
// without the needed scope. It is always the same value with the same
// message, so an agent (or an attacker) cannot tell these apart.
// ErrExpiredGrant is answered only for an authentic grant that passes every
// other check but whose appointment has started (now ≥ exp).
//
// Verify does not know whether the link is still active: the caller checks
// that (the resource server already does for the bearer token) and answers
// invalid_grant for a revoked link. The caller also reads the booking's
// current version and passes it in Expect, inside the transaction that makes
// the change, so a concurrent mutation cannot slip between the check and the
// write.
package grant
