package problem

// The codes Linkslot answers, every one defined here and nowhere else. An
// edge writes them as it must: the MCP edge in a failed tool result's
// "error" object, the HTTP API and pages edge in {"error": …} bodies and
// page messages. The OAuth endpoints answer fosite's RFC 6749 errors, and
// dynamic registration RFC 7591's (internal/dcr: invalid_redirect_uri,
// invalid_client_metadata), as those protocols name them; the codes below
// that share a name with one (invalid_request, invalid_grant,
// server_error, temporarily_unavailable) are the product's own answers
// outside OAuth, and rate_limited is also the registration endpoint's.

// Tool result codes (docs/reference.md §5 "Error codes").
const (
	CodeInvalidArgument       = "invalid_argument"
	CodeInvalidTime           = "invalid_time"
	CodeUnknownBusiness       = "unknown_business"
	CodeUnknownService        = "unknown_service"
	CodeUnknownStaff          = "unknown_staff"
	CodeStaffServiceMismatch  = "staff_service_mismatch"
	CodeBusinessNotBookable   = "business_not_bookable"
	CodeSlotTaken             = "slot_taken"
	CodeTooSoon               = "too_soon"
	CodeBeyondHorizon         = "beyond_booking_horizon"
	CodeInThePast             = "in_the_past"
	CodeDepositRequired       = "deposit_required"
	CodePaymentActive         = "payment_active"
	CodeBookingNotFound       = "booking_not_found"
	CodeAlreadyCancelled      = "already_cancelled"
	CodeCancellationClosed    = "cancellation_closed"
	CodeInvalidGrant          = "invalid_grant"
	CodeExpiredGrant          = "expired_grant"
	CodeConfirmationRequired  = "confirmation_required"
	CodeSummaryChanged        = "summary_changed"
	CodeMissingIdempotencyKey = "missing_idempotency_key"
	CodeInvalidIdempotencyKey = "invalid_idempotency_key"
	CodeIdempotencyConflict   = "idempotency_conflict"
	// CodeRateLimited: too many calls (with retry_after_sec), and a
	// request whose idempotency key is still running.
	CodeRateLimited = "rate_limited"
	// CodeBookingChanged: the booking changed (another mutation bumped its
	// version) between the plan and the execution. Not in the reference's
	// list on its own: the MCP layer normally sees it only when two
	// mutations of one booking race, and may answer it as summary_changed
	// or invalid_grant. It wraps store.ErrConflict.
	CodeBookingChanged = "booking_changed"
	// CodeInvalidTransition: a business action the booking's state does
	// not allow (confirm a confirmed booking, mark a future one a no-show,
	// complete a cancelled one; docs/reference.md "Bookings the business
	// answers"). Nothing changed.
	CodeInvalidTransition = "invalid_transition"
	// CodeServerError: an internal failure, logged; never with its detail.
	CodeServerError = "server_error"
)

// Waitlist offer codes (create_my_booking with offer_reference,
// docs/reference.md §16 "Waitlist").
const (
	// CodeOfferNotFound: no offer has the reference, or it is another
	// person's (indistinguishable, as booking_not_found).
	CodeOfferNotFound = "offer_not_found"
	// CodeOfferOtherLink: the person's offer was made to another
	// connection (the link that joined the waitlist).
	CodeOfferOtherLink = "offer_other_link"
	// CodeOfferLapsed: the offer's time ran out, or it was used or passed
	// on; the slot is no longer held.
	CodeOfferLapsed = "offer_lapsed"
	// CodeOfferMismatch: the booking asked for is not the offered slot
	// (business, service, staff member or start differ).
	CodeOfferMismatch = "offer_mismatch"
)

// Administration codes (the admin service, its JSON API and pages).
const (
	CodeNotFound      = "not_found"
	CodeAlreadyExists = "already_exists"
	// CodeInvalidInput: the input was refused; Problems lists every part.
	CodeInvalidInput         = "invalid_input"
	CodeConflict             = "conflict"
	CodeInvalidRequest       = "invalid_request"
	CodeInvalidJSON          = "invalid_json"
	CodeInvalidCatalog       = "invalid_catalog"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeMethodNotAllowed     = "method_not_allowed"
)

// HTTP edge codes (the resource server's router, body limits, admission).
const (
	CodeUnauthorized           = "unauthorized"
	CodeForbidden              = "forbidden"
	CodeRequestTooLarge        = "request_too_large"
	CodeTooLarge               = "too_large"
	CodeTemporarilyUnavailable = "temporarily_unavailable"
)

// Account codes (internal/identity): the sign-in, sign-up, e-mail link and
// account pages show their messages as they are.
const (
	CodeInvalidEmail       = "invalid_email"
	CodeWeakPassword       = "weak_password"
	CodeEmailUnavailable   = "email_unavailable"
	CodeInvalidCredentials = "invalid_credentials"
	CodeWrongPassword      = "wrong_password"
	CodeAccountDisabled    = "account_disabled"
	CodeThrottled          = "sign_in_throttled"
	CodeBusy               = "busy"
	CodeNoSession          = "no_session"
	CodeLinkNotFound       = "link_not_found"
	CodeEmailLinkInvalid   = "email_link_invalid"
	CodeEmailLinkExpired   = "email_link_expired"
	CodeEmailLinkUsed      = "email_link_used"
	CodeMailUnavailable    = "mail_unavailable"
	CodeTooManyMails       = "too_many_mails"
)

// Passkey codes (internal/passkey).
const (
	CodePasskeysUnavailable      = "passkeys_unavailable"
	CodePasskeyMalformed         = "passkey_malformed"
	CodePasskeyCeremony          = "passkey_ceremony_expired"
	CodePasskeyNotVerified       = "passkey_not_verified"
	CodeUnknownPasskey           = "unknown_passkey"
	CodePasskeyPossibleClone     = "passkey_possible_clone"
	CodePasskeyAlreadyRegistered = "passkey_already_registered"
	CodeInvalidPasskeyName       = "invalid_passkey_name"
	CodeTooManyPasskeys          = "too_many_passkeys"
	CodeNoPasskeys               = "no_passkeys"
	CodePasskeyNotFound          = "passkey_not_found"
)
