package store

import "time"

// Account is a person (or an administrator) who signs in to Linkslot.
type Account struct {
	ID           string
	Email        string // lower-cased, unique
	PasswordHash string // argon2id/bcrypt encoded; never logged
	Admin        bool
	Disabled     bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// EmailVerifiedAt is when the person proved they read mail at Email
	// (nil: not yet).
	EmailVerifiedAt *time.Time
	// DeletedAt is when the person deleted the account; the row stays as
	// a tombstone without personal data (store.AccountErasure).
	DeletedAt *time.Time
}

// AccountQuery selects accounts for administrators.
type AccountQuery struct {
	Text   string // part of the email address
	Limit  int
	Offset int
}

// WebSession is a signed-in browser session on the consent UI.
type WebSession struct {
	IDHash    string // HashSecret of the cookie value
	AccountID string
	// CreatedAt is also when the person authenticated (password or
	// passkey): every sign-in creates a new session and nothing extends
	// or renews one, so it is the auth_time of the ID tokens issued in it
	// (docs/prompt-and-max-age.md).
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Client is an OAuth client registered by an administrator.
type Client struct {
	ID            string
	Name          string
	SecretHash    string // empty for public clients
	Public        bool
	RedirectURIs  []string
	AllowedScopes []string
	DefaultScopes []string
	GrantTypes    []string
	LogoURL       string
	Contact       string
	Disabled      bool
	// PinnedDocument is, for a client whose ID is the URL of its client ID
	// metadata document (docs/reference.md §10), a copy of that document used
	// instead of fetching it.
	PinnedDocument string
	// OpenLinked marks a metadata-document client recorded when it first
	// linked under LINKSLOT_CIMD_POLICY=open, not registered by an
	// administrator.
	OpenLinked bool
	// JWKSURI gives a registered client its public keys: it then
	// authenticates with private_key_jwt (RFC 7523) instead of a secret.
	JWKSURI string
	// IDTokenSignedResponseAlg is the algorithm of the client's ID tokens
	// (OpenID Connect Dynamic Client Registration's
	// id_token_signed_response_alg): "ES256", "RS256", or "" for
	// LINKSLOT_ID_TOKEN_ALG. For a metadata-document client the document's
	// value, when it has one, takes its place.
	IDTokenSignedResponseAlg string
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// ClientRegistration is a dynamically registered client's registration
// (RFC 7591): the SHA-256 of its registration access token (HashSecret),
// the client metadata as accepted (JSON, as answered), and the client
// address that registered it.
type ClientRegistration struct {
	ClientID        string
	AccessTokenHash string
	Metadata        []byte
	ClientAddr      string
	CreatedAt       time.Time
}

// Link statuses.
const (
	LinkActive  = "active"
	LinkRevoked = "revoked"
)

// Link is a connected identity: a person's approval of one client, with the
// scopes they granted. Tokens carry the link id.
type Link struct {
	ID         string
	AccountID  string
	ClientID   string
	Scopes     []string
	Status     string
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  *time.Time
}

// TokenKind names the kind of an OAuth token session.
type TokenKind string

// Token session kinds, one per fosite storage family.
const (
	KindAuthorizeCode TokenKind = "authorize_code"
	KindAccessToken   TokenKind = "access_token"
	KindRefreshToken  TokenKind = "refresh_token"
	KindPKCE          TokenKind = "pkce"
	KindOpenID        TokenKind = "openid"
)

// TokenKinds is every token session kind.
var TokenKinds = []TokenKind{KindAuthorizeCode, KindPKCE, KindOpenID, KindAccessToken, KindRefreshToken}

// TokenSession is one stored OAuth request (code, token, PKCE or OIDC
// session). The signature is stored only as a hash; Request holds the
// serialized request and session, opaque to the store.
type TokenSession struct {
	Kind          TokenKind
	SignatureHash string
	RequestID     string // the grant family: every token issued from one code shares it
	ClientID      string
	AccountID     string
	LinkID        string
	Active        bool
	Request       []byte
	ExpiresAt     time.Time
	CreatedAt     time.Time
	// RotatedAt and Successor are set on a refresh token when a rotation
	// spends it with the refresh grace on (TokenBatch.Rotation): when, and
	// the refresh token that replaced it, sealed. Zero and nil otherwise.
	RotatedAt time.Time
	Successor []byte
}

// Signing key purposes.
const (
	KeyPurposeToken = "token" // access tokens and ES256 ID tokens
	KeyPurposeGrant = "grant" // booking grants
	// KeyPurposeTokenRS256 holds the RS256 keys that sign the ID tokens of
	// clients choosing RS256 (docs/reference.md §14); rotated with
	// KeyPurposeToken.
	KeyPurposeTokenRS256 = "token-rs256"
)

// SigningKey is an asymmetric key whose private half is encrypted at rest.
type SigningKey struct {
	ID               string // the JWS kid
	Purpose          string
	Algorithm        string // ES256, or RS256 for KeyPurposeTokenRS256
	PrivateEncrypted []byte
	PublicJWK        []byte // JSON Web Key of the public half
	CreatedAt        time.Time
	RetiredAt        *time.Time // set when a newer key took over; still published until expiry
}

// Business categories.
const (
	CategoryAppointment = "appointment"
	CategoryRestaurant  = "restaurant"
)

// Business is a bookable place.
type Business struct {
	ID                        string
	Reference                 string // public, stable: what agents pass around
	Name                      string
	Description               string
	Category                  string
	City                      string
	Address                   string
	TimeZone                  string // IANA
	AgentBooking              bool
	MinNoticeMinutes          int
	HorizonDays               int
	SlotIntervalMinutes       int
	CancellationWindowMinutes int   // cancelling later than this before the start costs the fee
	CancellationFeeCents      int64 // in Currency
	Currency                  string
	CancellationPolicy        string
	PrivacyNotice             string
	BookingURL                string // the business's own web booking page (deposits)
	ContactEmail              string // where the business hears of bookings (empty: nobody)
	// ConfirmationWindowMinutes is how long the business has to answer a
	// pending booking (0: DefaultConfirmationWindow).
	ConfirmationWindowMinutes int
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
}

// Service is something a business sells by appointment.
type Service struct {
	ID                  string
	BusinessID          string
	Reference           string
	Name                string
	Description         string
	DurationMinutes     int
	PriceCents          int64
	Currency            string
	BufferBeforeMinutes int
	BufferAfterMinutes  int
	DepositRequired     bool
	// RequiresConfirmation: a booking of this service is pending until the
	// business confirms or declines it.
	RequiresConfirmation bool
}

// Staff is a person who performs services.
type Staff struct {
	ID         string
	BusinessID string
	Reference  string
	Name       string
	ServiceIDs []string
}

// HoursWindow is one opening window on a weekday, in local minutes after
// midnight (0..1440). A weekday may have several windows (split shifts).
type HoursWindow struct {
	Weekday  time.Weekday
	StartMin int
	EndMin   int
}

// TimeOff is a span when a staff member does not work, as UTC instants.
type TimeOff struct {
	ID       string
	StaffID  string
	StartsAt time.Time
	EndsAt   time.Time
	Reason   string
}

// Catalog is everything about one business that availability needs, loaded
// in a constant number of statements.
type Catalog struct {
	Business     Business
	OpeningHours []HoursWindow
	Services     []Service
	Staff        []Staff
	StaffHours   map[string][]HoursWindow // by staff id
	StaffTimeOff map[string][]TimeOff     // by staff id
	// Credentials are the business's self-reported credentials. PutCatalog
	// replaces them when Credentials is not nil (a catalog file always
	// carries them, empty or not) and keeps them when it is nil; LoadCatalog
	// leaves it nil (Store.ListCredentials reads them).
	Credentials []Credential
}

// Booking statuses (docs/reference.md "Bookings the business answers").
const (
	BookingPending   = "pending" // waiting for the business; holds its slot
	BookingConfirmed = "confirmed"
	BookingDeclined  = "declined" // the business said no, or did not answer in time
	BookingCancelled = "cancelled"
	BookingCompleted = "completed"
	BookingNoShow    = "no_show"
)

// HoldingStatuses are the statuses whose bookings hold their slot: no two
// of them overlap for one staff member.
var HoldingStatuses = []string{BookingPending, BookingConfirmed}

// HoldsSlot reports whether a booking of this status holds its slot.
func HoldsSlot(status string) bool { return status == BookingPending || status == BookingConfirmed }

// DefaultConfirmationWindow is how long a business has to answer a pending
// booking when its catalog sets no window.
const DefaultConfirmationWindow = 24 * time.Hour

// ConfirmationWindow is b's window for answering a pending booking.
func (b Business) ConfirmationWindow() time.Duration {
	if b.ConfirmationWindowMinutes <= 0 {
		return DefaultConfirmationWindow
	}
	return time.Duration(b.ConfirmationWindowMinutes) * time.Minute
}

// Credential kinds.
const (
	CredentialLicense       = "license"
	CredentialInsurance     = "insurance"
	CredentialCertification = "certification"
)

// Credential is one license, insurance or certification a business reports
// about itself; Linkslot does not verify it.
type Credential struct {
	Kind       string
	Name       string
	Issuer     string
	Number     string // optional
	ValidUntil string // optional, YYYY-MM-DD
	UpdatedAt  time.Time
}

// Payment states, set by imports; no payment is taken by Linkslot.
const (
	PaymentNone        = "none"
	PaymentDepositHeld = "deposit_held"
	PaymentPaid        = "paid"
)

// StaffDay is what Store.StaffDay reads: a business's version, the
// blocked spans of its staff members' bookings and held offers in a
// window, and the business's calendar tag.
type StaffDay struct {
	Found      bool
	BusinessID string
	UpdatedAt  time.Time
	Busy       []BusySpan
	// CalendarTag names the busy times that the connected calendars of
	// the business's staff stored: a new tag whenever a sync changes them
	// or a calendar is set or removed, the same while they stay as they
	// are; empty while no staff member has a calendar (docs/calendars.md
	// "Availability"). Bookings.CalendarBusyDay reads the busy times.
	CalendarTag string
}

// CalendarDay is what Bookings.CalendarBusyDay reads: the business's
// calendar tag and, for each staff member with a connected calendar, the
// busy times it blocks in a window, all from one snapshot.
type CalendarDay struct {
	Tag   string
	Staff []StaffCalendarDay
}

// StaffCalendarDay is one connected calendar's busy times in a window.
// BusyTag names them: a new tag whenever they change. Known: BusyTag was
// among the tags the caller holds the times of, which were not read again
// (Busy is empty). Each span's BookingID is CalendarBusyID.
type StaffCalendarDay struct {
	StaffID string
	BusyTag string
	Known   bool
	Busy    []BusySpan
}

// BusySpan is the blocked span (BlockStart, BlockEnd) of one confirmed
// booking of a staff member.
type BusySpan struct {
	BookingID  string
	StaffID    string
	BlockStart time.Time
	BlockEnd   time.Time
}

// Booking is one appointment. BlockStart/BlockEnd are the buffer-padded span
// that no other confirmed booking of the same staff member may overlap.
type Booking struct {
	ID                   string
	Reference            string
	BusinessID           string
	ServiceID            string
	StaffID              string
	AccountID            string
	LinkID               string
	StartsAt             time.Time
	EndsAt               time.Time
	BlockStart           time.Time
	BlockEnd             time.Time
	Status               string
	Version              int
	Notes                string
	PaymentState         string
	PriceCents           int64
	Currency             string
	CancelReason         string
	CancellationFeeCents int64
	CreatedAt            time.Time
	UpdatedAt            time.Time
	CancelledAt          *time.Time
	// RespondBy is when a pending booking is declined if the business has
	// not answered; nil for any other.
	RespondBy *time.Time
}

// BookingEvent is one entry of a booking's history (created, rescheduled,
// cancelled), keeping the previous time.
type BookingEvent struct {
	ID        string
	BookingID string
	Version   int
	Action    string
	StaffID   string
	StartsAt  time.Time
	EndsAt    time.Time
	At        time.Time
}

// BookingFilter selects a person's bookings.
type BookingFilter struct {
	AccountID string
	Status    string // upcoming, past, cancelled, pending, all
	Now       time.Time
	Limit     int
	Offset    int
}

// BusinessBookingFilter selects a business's bookings (the business
// console's lists).
type BusinessBookingFilter struct {
	BusinessID string
	StaffID    string   // optional: one staff member's
	Statuses   []string // optional: only these statuses
	From, To   time.Time
	Limit      int
	Offset     int
}

// BusinessQuery is a free-text business search.
type BusinessQuery struct {
	Text   string
	City   string
	Limit  int
	Offset int
}

// Idempotency record states.
const (
	IdemPending = "pending"
	IdemDone    = "done"
)

// IdempotencyRecord remembers one mutation request by (link, tool, key).
type IdempotencyRecord struct {
	LinkID    string
	Tool      string
	Key       string
	ArgsHash  string
	State     string
	Response  []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Activity is one confirmed mutation, shown to the person on the Activity
// page: made by an agent through a link, or by the person on the web.
type Activity struct {
	ID               string
	AccountID        string
	LinkID           string // empty when made on the web
	ClientID         string // empty when made on the web
	Via              string // ViaAgent, ViaWeb or ViaBusiness; empty is stored as ViaAgent
	Actor            string // ViaBusiness: who acted for the business, as the person sees it
	Tool             string
	Arguments        []byte // JSON
	Summary          string
	ConfirmationText string
	IdempotencyKey   string
	Outcome          []byte // JSON
	RequestID        string
	CreatedAt        time.Time
}

// Activity.Via values.
const (
	ViaAgent    = "agent"
	ViaWeb      = "web"
	ViaBusiness = "business"
)

// AuditEvent is one administrative action.
type AuditEvent struct {
	ID        string
	ActorID   string // account id, or "cli" for the command line
	Action    string // e.g. client.create
	Target    string
	Before    []byte // JSON, may be empty
	After     []byte // JSON, may be empty
	RequestID string
	// ClientAddr is the client address of the request (internal/clientaddr);
	// empty for the command line.
	ClientAddr string
	CreatedAt  time.Time
}
