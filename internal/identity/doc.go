// Package identity manages the people who sign in to Linkslot: accounts,
// sign-in with throttling, browser sessions, the links (connected
// identities) they have approved, and the activity agents performed through
// those links. It is the domain layer under consent-ui and imports no HTTP,
// gorm or OAuth package.
//
// Accounts. An account is a normalized (trimmed, lower-cased) email address
// and an argon2id password hash (internal/password). Passwords must have at
// least MinPasswordLength characters and must not be the email address.
//
// Sign-up never reveals whether an address already has an account: SignUp
// answers ErrEmailUnavailable for a duplicate, after doing the same work (a
// full password hash) as a successful sign-up, and callers must show both
// outcomes identically. consent-ui answers every accepted sign-up with the
// same sign-in page and the notice SignUpNotice: "If this address was not
// registered yet, your Linkslot account now exists. Sign in below with the
// address and the password you chose. If it was already registered, sign in
// with that account's password." Nothing is signed in automatically, so the
// answer is the same for a new and an existing address.
//
// Sign-in. Authenticate compares the password in constant time and, for an
// unknown address, verifies against a dummy hash so that the answer takes
// the same time. Failures are throttled with a sliding window
// (ThrottlePolicy), counted in memory or — with Config.RateWindows, as on
// PostgreSQL — in the database, so that every replica counts the same
// failures (one row per key and second): per account and client address
// (the account keyed by the normalized address, known or not) and, with a
// higher limit, per client address. Once a key reaches its limit, further
// attempts are refused without checking the password until a delay has
// passed since the last failure; the delay doubles with each further
// failure, up to the window length. Failures from other addresses never
// make an address wait, so nobody can lock the owner out: the account's
// own count across addresses (AccountCeiling) only lowers the per-address
// limit to 1 for addresses that already failed for it. After the wait a
// correct password always works, and it clears that address's failures for
// the account. ErrThrottled's RetryAfter says when to try again.
//
// Admission. Every password hash runs in one of the process's bounded
// hashing slots (password.Default: one per core, at most four). A sign-in,
// sign-up or password change that gets no slot within 2 s answers ErrBusy
// having checked, counted and changed nothing; consent-ui shows it as 503
// with Retry-After. A right password whose stored hash was made with
// parameters older than password.Current is re-hashed and stored at that
// sign-in (unless the password changed meanwhile).
//
// Sessions. A session cookie value is 32 random bytes (base64url); only its
// SHA-256 (store.HashSecret) is stored. Sessions live SessionLifetime (12 h)
// and are created anew at every sign-in (rotation: the caller deletes the
// previous one). ChangePassword ends every other session of the account.
//
// Links. Approvals.Approve records a person's consent to an app (the link,
// and at the first approval the "app connected" e-mail) in the transaction
// the caller hands it: the authorize endpoint's, which stores the code the
// approval leads to. Connections lists the active links of an account; Disconnect
// revokes one (store.RevokeLink: the link and every token session issued for
// it). A link of another account answers ErrNotFound, exactly like a link
// that does not exist.
//
// E-mail links (emaillinks.go). Verification (VerifyLinkLifetime, 24 h) and
// password reset (ResetLinkLifetime, 30 min) links carry 32 random bytes;
// the store keeps only their SHA-256 with the purpose, the address the link
// was sent to and when it was used. A link works once (UseAccountToken is
// a conditional update, so of two concurrent uses one wins), only for its
// purpose, only while the account still has that address, and until it
// expires; checkLink tells ErrLinkInvalid, ErrLinkExpired and ErrLinkUsed
// apart so the page can say which. Every e-mail is queued through the
// Mailer inside the transaction of the change it tells of (sign-up and its
// link commit together). RequestPasswordReset answers nil for unknown,
// disabled and deleted addresses alike and counts every request against
// the sign-in throttle's keys for resets, known address or not.
package identity
