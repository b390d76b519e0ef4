// Package passkey lets people sign in with passkeys (WebAuthn, through
// github.com/go-webauthn/webauthn): add one to a signed-in account, sign in
// with it without typing an address (a discoverable credential), confirm a
// grave change (deleting the account) with it, and list, rename and remove
// them. It knows no HTTP handler: consent-ui passes it the browser's JSON
// answers as bytes. It stands beside internal/identity rather than in it
// because go-webauthn imports net/http, which the domain packages do not.
//
// Relying party. The RP ID is the issuer's host and the only origin
// accepted is the issuer's origin (scheme, host, port). Browsers refuse an
// IP address as RP ID and offer WebAuthn only in secure contexts (https, or
// http://localhost), so with an issuer such as http://127.0.0.1:8080 or
// http://intranet:8080 passkeys are unavailable: Available is false,
// UnavailableReason says why in plain words (the pages show it), and every
// ceremony answers ErrUnavailable. In development use
// LINKSLOT_ISSUER=http://localhost:8080.
//
// Ceremonies. Begin* creates the options for navigator.credentials.create
// or .get and stores the library's session data (the challenge, the user
// handle, what is allowed) server-side in store.WebAuthnCeremonies under
// the SHA-256 of a random handle that the page carries. Finish* takes the
// ceremony (deleted as it is read, so each is finished at most once), and
// refuses one that is expired (CeremonyLifetime, by the injected clock),
// of another purpose, or started for another account. A malformed answer
// is refused before the ceremony is touched. Nothing is stored unless every
// check passes, so a failed or cancelled ceremony leaves the account as it
// was.
//
// Registration asks for a discoverable credential (resident key required),
// user verification preferred, no attestation, and excludes the account's
// existing passkeys. The user handle is the account id: random, stable,
// and not personal. The stored credential is the library's Credential as
// JSON (public key, flags, sign counter). With a Mailer, the person gets an
// e-mail for every passkey added, queued in the transaction that stores it;
// with e-mail off (identity.ErrMailUnavailable) the passkey is added
// without it, since the e-mail only tells of the change.
//
// Sign-in is discoverable: no address is typed, the authenticator returns
// the user handle, and the credential must belong to that account. It
// answers the account; the caller starts the same browser session as a
// password sign-in. A disabled account is refused (identity.ErrAccountDisabled).
// Unverified addresses sign in as they do with a password (the consent page
// then asks them to confirm the address). A passkey names no account before
// it verifies, so passkey sign-ins are held to the sign-in throttle's
// per-address key only (identity.AddressThrottled) and each one that fails
// to verify counts there as a failed sign-in; a success clears nothing.
//
// Sign counter. A credential whose counter is not zero must report a
// higher counter each time. One that does not (go-webauthn's clone
// warning) is refused with ErrPossibleClone, counted as a failure, and the
// stored counter is kept, so the genuine authenticator still works; synced
// passkeys report 0 always and are not affected. A verified use stores the
// new counter and flags and the last use time.
//
// Confirmation (BeginReauth/FinishReauth) is an assertion limited to the
// account's own passkeys with user verification required.
package passkey
