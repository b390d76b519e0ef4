package store

import (
	"context"
	"time"
)

// Store is everything Linkslot persists. sqlstore.Store implements it for
// PostgreSQL and SQLite.
type Store interface {
	Accounts
	WebSessions
	Clients
	ClientRegistrations
	Links
	Tokens
	Keys
	CatalogStore
	Bookings
	Idempotency
	Activities
	Audit
	ClientAssertions
	AccountTokens
	Passkeys
	WebAuthnCeremonies
	AccountErasure
	Outbox
	Webhooks
	Feeds
	Calendars
	Callbacks
	Waitlist
	Members
	Console

	// InTx runs fn with a Store bound to one transaction: everything fn
	// writes commits together when it returns nil and rolls back otherwise.
	// On SQLite the transaction holds the write lock from its start, so a
	// check-then-write inside it is serialized across processes. Code
	// outside the store does not use fn's Store as it is: each consumer
	// narrows it at once to the interface it declares (an inTx helper of
	// its own, such as admin.Tx or mutation.Tx; docs/design.md
	// "Transactions").
	InTx(ctx context.Context, fn func(Store) error) error
	// Begin starts a transaction for a caller whose protocol opens and
	// ends it in separate calls (fosite's storage.Transactional). The
	// transaction is bound to ctx: it rolls back when ctx is cancelled
	// before Commit. The caller must end it with Commit or Rollback.
	Begin(ctx context.Context) (Tx, error)
	// Ping reports whether the database answers and the schema is current.
	Ping(ctx context.Context) error
	// Dialect is "postgres" or "sqlite".
	Dialect() string
	Close() error
}

// Tx is a Store bound to one database transaction begun by Store.Begin.
// Its InTx runs in a savepoint; its Begin fails.
type Tx interface {
	Store
	// Commit commits the transaction; a failed commit rolls it back.
	Commit() error
	// Rollback undoes the transaction. After Commit it does nothing and
	// answers nil.
	Rollback() error
}

// ClientAssertions remembers the ids (jti, stored hashed) of client
// assertions already used (RFC 7523 §3, docs/reference.md §10), for every replica.
type ClientAssertions interface {
	// UseClientAssertion records jtiHash as used until expires. One that is
	// already recorded and has not expired at now answers ErrAlreadyExists;
	// of two concurrent uses exactly one succeeds.
	UseClientAssertion(ctx context.Context, jtiHash string, expires, now time.Time) error
}

// Accounts stores people and administrators.
type Accounts interface {
	CreateAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, id string) (Account, error)
	GetAccountByEmail(ctx context.Context, email string) (Account, error)
	ListAccounts(ctx context.Context) ([]Account, error)
	// SearchAccounts returns up to q.Limit+1 accounts whose email contains
	// q.Text (case-insensitively; empty matches all), ordered by email, so
	// the caller can tell whether more exist.
	SearchAccounts(ctx context.Context, q AccountQuery) ([]Account, error)
	UpdateAccount(ctx context.Context, id string, fn func(Account) (Account, error)) (Account, error)
}

// WebSessions stores consent-UI sign-in sessions.
type WebSessions interface {
	CreateWebSession(ctx context.Context, s WebSession) error
	GetWebSession(ctx context.Context, idHash string) (WebSession, error)
	// GetWebSessionAccount reads a session and its account in one
	// statement, as every signed-in page and authorization does;
	// ErrNotFound when there is no such session.
	GetWebSessionAccount(ctx context.Context, idHash string) (WebSession, Account, error)
	DeleteWebSession(ctx context.Context, idHash string) error
	// DeleteAccountWebSessions removes every session of the account except
	// keepIDHash (empty keeps none).
	DeleteAccountWebSessions(ctx context.Context, accountID, keepIDHash string) error
}

// Clients stores OAuth clients.
type Clients interface {
	CreateClient(ctx context.Context, c Client) error
	GetClient(ctx context.Context, id string) (Client, error)
	ListClients(ctx context.Context) ([]Client, error)
	UpdateClient(ctx context.Context, id string, fn func(Client) (Client, error)) (Client, error)
	DeleteClient(ctx context.Context, id string) error
}

// ClientRegistrations stores what dynamic client registration (RFC 7591,
// RFC 7592; internal/dcr) keeps beside a client: the hash of its
// registration access token and the metadata it was registered with. A
// registration is deleted with its client.
type ClientRegistrations interface {
	// CreateClientRegistration inserts the registration of a client that
	// exists (create both in one transaction); a second answers
	// ErrAlreadyExists.
	CreateClientRegistration(ctx context.Context, r ClientRegistration) error
	GetClientRegistration(ctx context.Context, clientID string) (ClientRegistration, error)
}

// Links stores connected identities.
type Links interface {
	// UpsertLink creates the active link of (account, client) or, when one
	// exists, replaces its scopes and reactivates it. It returns the link.
	UpsertLink(ctx context.Context, accountID, clientID string, scopes []string, now time.Time) (Link, error)
	GetLink(ctx context.Context, id string) (Link, error)
	// GetActiveLink returns the active link of (account, client).
	GetActiveLink(ctx context.Context, accountID, clientID string) (Link, error)
	// GetClientLink reads a registered client and the active link of
	// (accountID, the client) in one statement, as an authorization by a
	// signed-in person does: ErrNotFound when no client has the id; the
	// link is nil when there is none (or accountID is empty).
	GetClientLink(ctx context.Context, clientID, accountID string) (Client, *Link, error)
	ListAccountLinks(ctx context.Context, accountID string) ([]Link, error)
	// TouchLink records use; it is best-effort and may be coalesced.
	TouchLink(ctx context.Context, id string, now time.Time) error
	// RevokeLink marks the link revoked and deactivates every token session
	// issued for it, in one transaction.
	RevokeLink(ctx context.Context, id string, now time.Time) error
}

// Tokens stores OAuth token sessions (fosite's storage, below the adapter).
// Besides one method per statement it has the token endpoint's combined
// statements (docs/reference.md §9): one round trip and one commit per token
// response instead of one per fosite storage call.
type Tokens interface {
	CreateTokenSession(ctx context.Context, s TokenSession) error
	GetTokenSession(ctx context.Context, kind TokenKind, signatureHash string) (TokenSession, error)
	DeleteTokenSession(ctx context.Context, kind TokenKind, signatureHash string) error
	// DeactivateTokenSession flips an active session to inactive. It answers
	// ErrConflict when the session was already inactive (a second redemption
	// or rotation lost the race) and ErrNotFound when it does not exist.
	DeactivateTokenSession(ctx context.Context, kind TokenKind, signatureHash string) error
	// DeactivateRequest deactivates every session of the kind in a grant
	// family (empty kind: every kind).
	DeactivateRequest(ctx context.Context, kind TokenKind, requestID string) error
	// PurgeTokenSessions deletes sessions that expired before t, all in
	// one statement (tests; the janitor deletes in batches, through
	// Sweeps.SweepTokenSessions).
	PurgeTokenSessions(ctx context.Context, before time.Time) (int64, error)

	// ApplyTokenBatch writes b atomically, as a single statement where the
	// backend allows (PostgreSQL) and in one transaction otherwise. When a
	// deactivation (or a requirement) finds its session inactive it answers
	// ErrConflict, when it finds none ErrNotFound; either way nothing is
	// written. Of two concurrent batches deactivating the same session
	// exactly one succeeds, and a batch requiring a session that another
	// deactivates is written either before the deactivation or not at all.
	ApplyTokenBatch(ctx context.Context, b TokenBatch) error
	// GetTokenSessionLink returns a session (active or not) and the state of
	// its link (Found is false without a link id or when the link is gone),
	// in one statement.
	GetTokenSessionLink(ctx context.Context, kind TokenKind, signatureHash string) (TokenSession, LinkState, error)
	// GetRequestTokenSessions returns the session kind/signatureHash and
	// those of also (its companions, each named by its own key) that exist
	// and belong to the same request, in one statement; the named session
	// comes first. ErrNotFound when it does not exist.
	GetRequestTokenSessions(ctx context.Context, kind TokenKind, signatureHash string, also ...TokenRef) ([]TokenSession, error)
	// PrefetchTokenRequest reads, in one statement, what a token request
	// asks for: the client, the session kind/signatureHash with those of
	// also that belong to its request (as GetRequestTokenSessions), and
	// its link. A missing client or session is reported in the result,
	// not as an error.
	PrefetchTokenRequest(ctx context.Context, clientID string, kind TokenKind, signatureHash string, also ...TokenRef) (TokenPrefetch, error)
}

// Keys stores signing keys.
type Keys interface {
	CreateSigningKey(ctx context.Context, k SigningKey) error
	// ListSigningKeys returns the keys of a purpose, newest first.
	ListSigningKeys(ctx context.Context, purpose string) ([]SigningKey, error)
	// RetireSigningKey marks a key retired at t (it stays published).
	RetireSigningKey(ctx context.Context, id string, t time.Time) error
	DeleteSigningKey(ctx context.Context, id string) error
}

// CatalogStore stores businesses, services, staff and their hours.
type CatalogStore interface {
	// PutCatalog creates or replaces one business with everything below it,
	// matched by business reference, in one transaction. Bookings are kept;
	// services and staff are matched by reference so existing bookings stay
	// attached.
	PutCatalog(ctx context.Context, c Catalog) (Catalog, error)
	// LoadCatalog loads a business and everything below it in a constant
	// number of statements.
	LoadCatalog(ctx context.Context, businessReference string) (Catalog, error)
	LoadCatalogByID(ctx context.Context, businessID string) (Catalog, error)
	GetBusiness(ctx context.Context, reference string) (Business, error)
	ListBusinesses(ctx context.Context) ([]Business, error)
	SetAgentBooking(ctx context.Context, reference string, on bool) (Business, error)
	// SearchBusinesses ranks agent-enabled businesses by text over name,
	// category, city and service names. It returns up to q.Limit+1 rows so
	// the caller can tell whether more exist.
	SearchBusinesses(ctx context.Context, q BusinessQuery) ([]Business, error)
	// ListCredentials returns a business's self-reported credentials in
	// their order.
	ListCredentials(ctx context.Context, businessID string) ([]Credential, error)
	// ReplaceCredentials replaces a business's self-reported credentials
	// with cs, in order, in one transaction.
	ReplaceCredentials(ctx context.Context, businessID string, cs []Credential) error
	// SuggestSearches proposes up to three queries close to q's text (a
	// word within a small edit distance of one in the catalog) that find
	// something, for a search that found nothing.
	SuggestSearches(ctx context.Context, q BusinessQuery) ([]string, error)
}

// Bookings stores appointments.
type Bookings interface {
	// InsertBooking inserts a booking; one that holds its slot (pending or
	// confirmed, HoldsSlot) and overlaps another such booking of the same
	// staff member answers ErrOverlap and writes nothing.
	InsertBooking(ctx context.Context, b Booking) error
	GetBooking(ctx context.Context, id string) (Booking, error)
	GetBookingByReference(ctx context.Context, reference string) (Booking, error)
	// UpdateBooking reads the booking, applies fn and writes the result with
	// the same overlap guarantee, all in one transaction. fn sees the current
	// row; returning an error writes nothing.
	UpdateBooking(ctx context.Context, id string, fn func(Booking) (Booking, error)) (Booking, error)
	// ListStaffBookings returns the bookings holding their slot (pending or
	// confirmed) of the staff members
	// whose blocked span intersects [from, to), in one statement.
	ListStaffBookings(ctx context.Context, staffIDs []string, from, to time.Time) ([]Booking, error)
	// StaffDay reads, in one statement, the version of the business with
	// reference, its calendar tag, and the blocked spans of the pending
	// and confirmed bookings and held waitlist offers of staffIDs that
	// intersect [from, to), earliest first: what ListStaffBookings reads
	// but the connected calendars' busy times, which the tag names, with
	// the business row's UpdatedAt beside it, so that the booking engine
	// can answer availability from its cached catalog and busy times with
	// a single statement when the versions show they are current. Found
	// is false when no business has the reference.
	StaffDay(ctx context.Context, reference string, staffIDs []string, from, to time.Time) (StaffDay, error)
	// CalendarBusyDay reads, in one statement, the business's calendar tag
	// (StaffDay.CalendarTag) and, for each connected calendar of its staff,
	// the calendar's busy tag and the busy times it blocks in [from, to),
	// earliest first, but those of calendars whose busy tag is among known
	// (the caller holds them already).
	CalendarBusyDay(ctx context.Context, businessID string, from, to time.Time, known []string) (CalendarDay, error)
	// ListAccountBookings returns up to f.Limit+1 bookings of a person.
	ListAccountBookings(ctx context.Context, f BookingFilter) ([]Booking, error)
	// ListBusinessBookings returns up to f.Limit+1 bookings of a business
	// starting in [f.From, f.To), earliest first.
	ListBusinessBookings(ctx context.Context, f BusinessBookingFilter) ([]Booking, error)
	// ListDuePending returns up to limit pending bookings whose respond-by
	// instant is at or before now, earliest first.
	ListDuePending(ctx context.Context, now time.Time, limit int) ([]Booking, error)
	AddBookingEvent(ctx context.Context, e BookingEvent) error
	ListBookingEvents(ctx context.Context, bookingID string) ([]BookingEvent, error)
}

// Idempotency stores mutation idempotency records.
type Idempotency interface {
	// ClaimIdempotency inserts a pending record. When one already exists for
	// (link, tool, key) it returns that record and ErrAlreadyExists.
	ClaimIdempotency(ctx context.Context, r IdempotencyRecord) (IdempotencyRecord, error)
	GetIdempotency(ctx context.Context, linkID, tool, key string) (IdempotencyRecord, error)
	// CompleteIdempotency stores the answer and marks the record done.
	CompleteIdempotency(ctx context.Context, linkID, tool, key string, response []byte) error
	// ReleaseIdempotency deletes a pending record (the mutation changed
	// nothing and may be retried with the same key).
	ReleaseIdempotency(ctx context.Context, linkID, tool, key string) error
	PurgeIdempotency(ctx context.Context, before time.Time) (int64, error)
}

// Activities stores the confirmed mutations shown on the Activity page.
type Activities interface {
	AddActivity(ctx context.Context, a Activity) error
	// ListActivity returns up to limit+1 entries of an account, newest first.
	ListActivity(ctx context.Context, accountID string, limit, offset int) ([]Activity, error)
}

// Audit stores administrative actions.
type Audit interface {
	AddAuditEvent(ctx context.Context, e AuditEvent) error
	ListAuditEvents(ctx context.Context, limit, offset int) ([]AuditEvent, error)
}
