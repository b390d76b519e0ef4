package store

import (
	"context"
	"strings"
	"time"
)

// Account token purposes: what a single-use e-mail link is for.
const (
	TokenVerifyEmail   = "verify_email"
	TokenResetPassword = "reset_password"
)

// AccountToken is a single-use link sent by e-mail. Only the hash of the
// token in the link is stored.
type AccountToken struct {
	TokenHash string // HashSecret of the token in the link
	AccountID string
	Purpose   string // TokenVerifyEmail or TokenResetPassword
	Email     string // the address the link was sent to
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// AccountTokens stores single-use e-mail links.
type AccountTokens interface {
	CreateAccountToken(ctx context.Context, t AccountToken) error
	GetAccountToken(ctx context.Context, tokenHash string) (AccountToken, error)
	// UseAccountToken marks an unused token used at now. A token already
	// used answers ErrConflict (a second use lost), a missing one
	// ErrNotFound.
	UseAccountToken(ctx context.Context, tokenHash string, now time.Time) error
	// CountAccountTokens counts the account's tokens of a purpose created
	// at or after since (resend throttling).
	CountAccountTokens(ctx context.Context, accountID, purpose string, since time.Time) (int, error)
	// DeleteAccountTokens withdraws the account's unused links of a purpose
	// (empty: every purpose). Used links stay, so that a second use still
	// answers "used" rather than "unknown".
	DeleteAccountTokens(ctx context.Context, accountID, purpose string) error
}

// Passkey is a WebAuthn credential registered to an account.
type Passkey struct {
	ID           string
	AccountID    string
	CredentialID []byte // unique across accounts
	Name         string
	Credential   []byte // JSON of the library's credential: public key, flags, sign counter
	CreatedAt    time.Time
	LastUsedAt   *time.Time
}

// Passkeys stores WebAuthn credentials.
type Passkeys interface {
	// CreatePasskey inserts a passkey; a credential id already registered
	// (to anyone) answers ErrAlreadyExists.
	CreatePasskey(ctx context.Context, p Passkey) error
	// ListPasskeys returns an account's passkeys, oldest first.
	ListPasskeys(ctx context.Context, accountID string) ([]Passkey, error)
	GetPasskeyByCredentialID(ctx context.Context, credentialID []byte) (Passkey, error)
	// UpdatePasskey applies fn to the current row in one transaction.
	UpdatePasskey(ctx context.Context, id string, fn func(Passkey) (Passkey, error)) (Passkey, error)
	// DeletePasskey deletes one of the account's passkeys; another
	// account's, or an unknown id, answers ErrNotFound.
	DeletePasskey(ctx context.Context, accountID, id string) error
}

// WebAuthn ceremony purposes.
const (
	CeremonyRegister = "register"
	CeremonyLogin    = "login"
	CeremonyReauth   = "reauth"
)

// WebAuthnCeremony is the server half of one WebAuthn registration or
// assertion between its start and its finish: the challenge and what it
// allows. The browser holds a random handle; only its hash is stored.
type WebAuthnCeremony struct {
	IDHash    string
	AccountID string // empty for a discoverable sign-in
	Purpose   string
	Data      []byte // JSON of the library's session data
	ExpiresAt time.Time
}

// WebAuthnCeremonies stores ceremonies between start and finish.
type WebAuthnCeremonies interface {
	CreateWebAuthnCeremony(ctx context.Context, c WebAuthnCeremony) error
	// TakeWebAuthnCeremony deletes a ceremony and returns it, so each is
	// finished at most once (ErrNotFound when missing or taken already).
	TakeWebAuthnCeremony(ctx context.Context, idHash string) (WebAuthnCeremony, error)
}

// ErasedEmail is the placeholder an erased account's address becomes, so
// that the real address is free for a new sign-up and unique per account.
func ErasedEmail(accountID string) string { return "deleted+" + accountID + "@erased.invalid" }

// DeletedAccountLabel is the customer of an erased account's bookings,
// wherever a business or an administrator sees them (e-mails, webhooks,
// calendar feeds, admin pages): the booking stays, the person is gone.
const DeletedAccountLabel = "Deleted account"

// CustomerOf is how a business is shown the person who booked: a name (the
// part of the address before the @: accounts have no name field) and the
// address; for an erased account DeletedAccountLabel and no address.
func CustomerOf(a Account) (name, email string) {
	if a.DeletedAt != nil {
		return DeletedAccountLabel, ""
	}
	name, _, _ = strings.Cut(a.Email, "@")
	return name, a.Email
}

// AccountLabel is the account as a business or an administrator reads it:
// its address, or DeletedAccountLabel once erased.
func AccountLabel(a Account) string {
	if a.DeletedAt != nil {
		return DeletedAccountLabel
	}
	return a.Email
}

// AccountErasure erases what a person's account holds.
type AccountErasure interface {
	// EraseAccount, in one transaction: ends every browser session,
	// revokes every link with its token sessions, deletes the account's
	// e-mail links, passkeys and activity, clears the notes of its
	// bookings, turns off its calendar feed, and turns the account into a
	// tombstone (address
	// ErasedEmail, no password, disabled, DeletedAt = now). The bookings
	// stay, for the businesses, without personal data. A tombstone's
	// memberships of businesses are no longer read (Members).
	EraseAccount(ctx context.Context, accountID string, now time.Time) error
}
