package passkey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Limits.
const (
	// CeremonyLifetime is how long a started ceremony can be finished.
	// Pages carry their ceremony's options, so it covers a page left open
	// for a while; the browser's own prompt times out after PromptTimeout.
	CeremonyLifetime = 10 * time.Minute
	// PromptTimeout is the timeout the browser is asked to give its prompt.
	PromptTimeout = 5 * time.Minute
	// MaxNameLength bounds a passkey's name, in characters.
	MaxNameLength = 60
	// MaxPerAccount bounds the passkeys of one account.
	MaxPerAccount = 20
	// MaxResponseBytes bounds the browser's answer the Service parses.
	MaxResponseBytes = 32 << 10
)

// Errors, as the one domain error type (internal/problem): errors.Is
// compares codes. Messages are safe to show to the person; written as
// clauses, they follow what did not happen ("No passkey was added: this
// passkey is registered already.").
var (
	// ErrUnavailable: the issuer has no host name (see Availability).
	ErrUnavailable = problem.New(problem.CodePasskeysUnavailable, "passkeys are not available on this server")
	// ErrMalformed: the browser's answer is not a WebAuthn response.
	ErrMalformed = problem.New(problem.CodePasskeyMalformed, "the browser's passkey answer could not be read")
	// ErrCeremony: the ceremony is unknown, finished already, expired, or
	// belongs to another purpose or account.
	ErrCeremony = problem.New(problem.CodePasskeyCeremony, "this passkey request has expired or was used already")
	// ErrNotVerified: the answer did not verify (signature, origin,
	// challenge, user presence).
	ErrNotVerified = problem.New(problem.CodePasskeyNotVerified, "the passkey could not be verified")
	// ErrUnknownPasskey: the credential is not registered (to this
	// account), for example because it was removed.
	ErrUnknownPasskey = problem.New(problem.CodeUnknownPasskey, "this passkey is not registered with Linkslot; it may have been removed")
	// ErrPossibleClone: the authenticator's signature counter did not
	// advance, a sign that the key may have been copied.
	ErrPossibleClone = problem.New(problem.CodePasskeyPossibleClone, "this passkey's signature counter went backwards, which can mean the key was copied")
	// ErrAlreadyRegistered: the credential is registered already.
	ErrAlreadyRegistered = problem.New(problem.CodePasskeyAlreadyRegistered, "this passkey is registered already")
	// ErrInvalidName: a name that is too long or has control characters.
	ErrInvalidName = problem.Newf(problem.CodeInvalidPasskeyName, "give the passkey a name of at most %d characters, on one line", MaxNameLength)
	// ErrTooMany: the account has MaxPerAccount passkeys.
	ErrTooMany = problem.Newf(problem.CodeTooManyPasskeys, "an account can have at most %d passkeys; remove one first", MaxPerAccount)
	// ErrNoPasskeys: the account has no passkey to confirm with.
	ErrNoPasskeys = problem.New(problem.CodeNoPasskeys, "this account has no passkey")
	// ErrNotFound: no such passkey of this account.
	ErrNotFound = problem.New(problem.CodePasskeyNotFound, "this passkey was not found; it may have been removed")
)

// Store is the part of store.Store the Service uses.
type Store interface {
	store.Passkeys
	store.WebAuthnCeremonies
	GetAccount(ctx context.Context, id string) (store.Account, error)
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// Tx is what the Service writes in its one transaction: a new passkey and
// the e-mail that tells of it.
type Tx interface {
	CreatePasskey(ctx context.Context, p store.Passkey) error
	identity.MailTx
}

var _ Tx = store.Store(nil)

// inTx runs fn in one transaction (see Tx).
func (s *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// Config configures a Service. Store and Identity are required.
type Config struct {
	Store Store
	// Identity holds the sign-in throttle the passkey sign-ins share.
	Identity *identity.Service
	// Issuer is the server's public URL: its host is the RP ID, its
	// origin the only origin accepted.
	Issuer string
	// Clock defaults to store.SystemClock.
	Clock store.Clock
	// Mailer, when set, tells the person of every passkey added.
	Mailer identity.Mailer
}

// Service registers passkeys and verifies them. It is safe for
// concurrent use.
type Service struct {
	store       Store
	id          *identity.Service
	clock       store.Clock
	mailer      identity.Mailer
	issuer      string
	wa          *webauthn.WebAuthn // nil when unavailable
	unavailable string
}

// New returns a Service. An issuer passkeys cannot work with gives a
// Service whose Available is false, not an error.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Identity == nil {
		return nil, errors.New("passkey: Config.Store and Config.Identity are required")
	}
	s := &Service{store: cfg.Store, id: cfg.Identity, clock: cfg.Clock, mailer: cfg.Mailer, issuer: strings.TrimSuffix(cfg.Issuer, "/")}
	if s.clock == nil {
		s.clock = store.SystemClock
	}
	rpID, origin, reason := Availability(cfg.Issuer)
	if reason != "" {
		s.unavailable = reason
		return s, nil
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: "Linkslot",
		RPOrigins:     []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			UserVerification: protocol.VerificationPreferred,
		},
		AttestationPreference: protocol.PreferNoAttestation,
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: PromptTimeout, TimeoutUVD: PromptTimeout},
			Registration: webauthn.TimeoutConfig{Timeout: PromptTimeout, TimeoutUVD: PromptTimeout},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	s.wa = wa
	return s, nil
}

// Availability derives the relying party from the issuer: the RP ID is
// its host, the origin its scheme, host and port. reason, when not empty,
// says in plain words why passkeys cannot work with this issuer: none is
// set, its host is an IP address (browsers refuse IP addresses as RP
// IDs), or it is plain http on a host other than localhost (browsers offer
// WebAuthn only in secure contexts).
func Availability(issuer string) (rpID, origin, reason string) {
	if issuer == "" {
		return "", "", "Passkeys are not available because this server has no public address configured (LINKSLOT_ISSUER)."
	}
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return "", "", "Passkeys are not available because this server's public address (LINKSLOT_ISSUER) is not an http or https URL."
	}
	host := strings.ToLower(u.Hostname())
	if net.ParseIP(host) != nil {
		return "", "", "Passkeys are not available on this server: browsers only allow passkeys for a host name such as " +
			"localhost or linkslot.example.com, and this server is set up with the IP address " + host +
			" (LINKSLOT_ISSUER). Sign in with your password instead."
	}
	if u.Scheme == "http" && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
		return "", "", "Passkeys are not available on this server: browsers only allow passkeys on https addresses " +
			"(or http://localhost), and this server is set up with " + u.Scheme + "://" + u.Host + " (LINKSLOT_ISSUER)."
	}
	return host, u.Scheme + "://" + strings.ToLower(u.Host), ""
}

// Available reports whether passkeys work on this server.
func (s *Service) Available() bool { return s.wa != nil }

// UnavailableReason says why passkeys do not work here ("" when they do).
func (s *Service) UnavailableReason() string { return s.unavailable }

// Ceremony is a started registration or assertion: the options for
// navigator.credentials.create or .get (JSON, byte fields in base64url)
// and the handle the browser sends back with its answer.
type Ceremony struct {
	Handle    string
	Options   string
	ExpiresAt time.Time
}

// user is an account as go-webauthn sees it. The user handle is the
// account id: random, stable and not personal.
type user struct {
	acct  store.Account
	creds []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return []byte(u.acct.ID) }
func (u user) WebAuthnName() string                       { return u.acct.Email }
func (u user) WebAuthnDisplayName() string                { return u.acct.Email }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// decode reads a stored credential.
func decode(p store.Passkey) (webauthn.Credential, error) {
	var c webauthn.Credential
	if err := json.Unmarshal(p.Credential, &c); err != nil {
		return c, fmt.Errorf("passkey: stored credential %s: %w", p.ID, err)
	}
	return c, nil
}

// loadUser returns the account with its passkeys.
func (s *Service) loadUser(ctx context.Context, acct store.Account) (user, []store.Passkey, error) {
	ps, err := s.List(ctx, acct.ID)
	if err != nil {
		return user{}, nil, err
	}
	u, err := userOf(acct, ps)
	return u, ps, err
}

// userOf is the account with ps, its passkeys.
func userOf(acct store.Account, ps []store.Passkey) (user, error) {
	u := user{acct: acct}
	for _, p := range ps {
		c, err := decode(p)
		if err != nil {
			return user{}, err
		}
		u.creds = append(u.creds, c)
	}
	return u, nil
}

// start stores a ceremony's session data and returns its handle.
func (s *Service) start(ctx context.Context, purpose, accountID string, options any, sd *webauthn.SessionData) (Ceremony, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return Ceremony{}, fmt.Errorf("passkey: options: %w", err)
	}
	data, err := json.Marshal(sd)
	if err != nil {
		return Ceremony{}, fmt.Errorf("passkey: session data: %w", err)
	}
	h := store.RandomString(32)
	exp := store.UTC(s.clock()).Add(CeremonyLifetime)
	if err := s.store.CreateWebAuthnCeremony(ctx, store.WebAuthnCeremony{IDHash: store.HashSecret(h), AccountID: accountID,
		Purpose: purpose, Data: data, ExpiresAt: exp}); err != nil {
		return Ceremony{}, fmt.Errorf("passkey: store ceremony: %w", err)
	}
	return Ceremony{Handle: h, Options: string(opts), ExpiresAt: exp}, nil
}

// take finishes a ceremony at most once: ErrCeremony unless it exists,
// is unexpired, and is of this purpose and account.
func (s *Service) take(ctx context.Context, handle, purpose, accountID string) (webauthn.SessionData, error) {
	var sd webauthn.SessionData
	if handle == "" || len(handle) > 128 {
		return sd, ErrCeremony
	}
	c, err := s.store.TakeWebAuthnCeremony(ctx, store.HashSecret(handle))
	if errors.Is(err, store.ErrNotFound) {
		return sd, ErrCeremony
	}
	if err != nil {
		return sd, fmt.Errorf("passkey: take ceremony: %w", err)
	}
	if c.Purpose != purpose || c.AccountID != accountID || !s.clock().Before(c.ExpiresAt) {
		return sd, ErrCeremony
	}
	if err := json.Unmarshal(c.Data, &sd); err != nil {
		return sd, fmt.Errorf("passkey: ceremony data: %w", err)
	}
	return sd, nil
}

// CleanName trims a passkey name and checks it; an empty one becomes
// "Passkey added on <date>".
func CleanName(name string, now time.Time) (string, error) {
	n := strings.TrimSpace(name)
	if n == "" {
		return "Passkey added on " + now.UTC().Format("2 Jan 2006"), nil
	}
	// The text rule (docs/reference.md §4), and no line or paragraph
	// separator either: a passkey's name is one line, stored in NFC.
	n, err := textcheck.Text(n, MaxNameLength, false)
	if err != nil || strings.ContainsAny(n, "\u2028\u2029") {
		return "", ErrInvalidName
	}
	return n, nil
}

// BeginRegistration starts adding a passkey to a signed-in account: a
// discoverable credential (resident key required), user verification
// preferred, none of the account's passkeys again.
func (s *Service) BeginRegistration(ctx context.Context, acct store.Account) (Ceremony, error) {
	if !s.Available() {
		return Ceremony{}, ErrUnavailable
	}
	ps, err := s.List(ctx, acct.ID)
	if err != nil {
		return Ceremony{}, err
	}
	return s.BeginRegistrationWith(ctx, acct, ps)
}

// BeginRegistrationWith is BeginRegistration for a caller that has just
// listed the account's passkeys (List), so that they are read once.
func (s *Service) BeginRegistrationWith(ctx context.Context, acct store.Account, ps []store.Passkey) (Ceremony, error) {
	if !s.Available() {
		return Ceremony{}, ErrUnavailable
	}
	u, err := userOf(acct, ps)
	if err != nil {
		return Ceremony{}, err
	}
	if len(ps) >= MaxPerAccount {
		return Ceremony{}, ErrTooMany
	}
	creation, sd, err := s.wa.BeginRegistration(u,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithExclusions(webauthn.Credentials(u.creds).CredentialDescriptors()),
		webauthn.WithExtensions(webauthn.WithExtensionCredProps()))
	if err != nil {
		return Ceremony{}, fmt.Errorf("passkey: begin registration: %w", err)
	}
	return s.start(ctx, store.CeremonyRegister, acct.ID, creation, sd)
}

// parseCreation reads the browser's answer to navigator.credentials.create.
func parseCreation(response []byte) (*protocol.ParsedCredentialCreationData, error) {
	if len(response) == 0 || len(response) > MaxResponseBytes {
		return nil, ErrMalformed
	}
	p, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, ErrMalformed.Wrap(err)
	}
	return p, nil
}

// parseAssertion reads the browser's answer to navigator.credentials.get.
func parseAssertion(response []byte) (*protocol.ParsedCredentialAssertionData, error) {
	if len(response) == 0 || len(response) > MaxResponseBytes {
		return nil, ErrMalformed
	}
	p, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, ErrMalformed.Wrap(err)
	}
	return p, nil
}

// FinishRegistration verifies the browser's answer to a registration
// ceremony of this account and stores the passkey under name (see
// CleanName). A malformed answer (ErrMalformed) leaves the ceremony
// untouched; any other failure uses it up. Nothing is stored unless every
// check passes.
func (s *Service) FinishRegistration(ctx context.Context, acct store.Account, handle, name string, response []byte) (store.Passkey, error) {
	if !s.Available() {
		return store.Passkey{}, ErrUnavailable
	}
	now := store.UTC(s.clock())
	name, err := CleanName(name, now)
	if err != nil {
		return store.Passkey{}, err
	}
	parsed, err := parseCreation(response)
	if err != nil {
		return store.Passkey{}, err
	}
	sd, err := s.take(ctx, handle, store.CeremonyRegister, acct.ID)
	if err != nil {
		return store.Passkey{}, err
	}
	// Only the count is needed: CreateCredential reads the user's handle,
	// not its credentials.
	ps, err := s.store.ListPasskeys(ctx, acct.ID)
	if err != nil {
		return store.Passkey{}, fmt.Errorf("passkey: list: %w", err)
	}
	if len(ps) >= MaxPerAccount {
		return store.Passkey{}, ErrTooMany
	}
	cred, err := s.wa.CreateCredential(user{acct: acct}, sd, parsed)
	if err != nil {
		return store.Passkey{}, ErrNotVerified.Wrap(err)
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return store.Passkey{}, fmt.Errorf("passkey: encode credential: %w", err)
	}
	p := store.Passkey{ID: store.NewID("pk"), AccountID: acct.ID, CredentialID: cred.ID, Name: name, Credential: data, CreatedAt: now}
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.CreatePasskey(ctx, p); err != nil {
			return err
		}
		return identity.QueueNotice(ctx, s.mailer, tx, identity.Mail{To: acct.Email, Topic: identity.TopicPasskeyAdded,
			Subject: "A passkey was added to your Linkslot account",
			Text: "Hello,\n\na passkey named “" + name + "” was added to your Linkslot account on " +
				now.Format("2 Jan 2006 at 15:04 UTC") + ". You can now sign in with it instead of your password.\n\n" +
				"If this was not you, sign in, remove it under Passkeys (" + s.issuer + "/account/passkeys) and change your password.\n"})
	})
	if errors.Is(err, store.ErrAlreadyExists) {
		return store.Passkey{}, ErrAlreadyRegistered
	}
	if err != nil {
		return store.Passkey{}, fmt.Errorf("passkey: store: %w", err)
	}
	return p, nil
}

// BeginLogin starts a discoverable sign-in: no account is named, the
// authenticator offers the person's passkeys for this RP ID.
func (s *Service) BeginLogin(ctx context.Context) (Ceremony, error) {
	if !s.Available() {
		return Ceremony{}, ErrUnavailable
	}
	assertion, sd, err := s.wa.BeginDiscoverableLogin()
	if err != nil {
		return Ceremony{}, fmt.Errorf("passkey: begin sign-in: %w", err)
	}
	return s.start(ctx, store.CeremonyLogin, "", assertion, sd)
}

// FinishLogin verifies the browser's answer to a sign-in ceremony and
// returns the account it signs in; the caller starts the session as for a
// password sign-in. It is held to the sign-in throttle's per-address key
// (identity.ErrThrottled), and a passkey that does not verify counts
// as a failed sign-in there. A disabled account answers
// identity.ErrAccountDisabled. The passkey's last use and sign counter
// are recorded.
func (s *Service) FinishLogin(ctx context.Context, handle string, response []byte, clientAddr string) (store.Account, error) {
	if !s.Available() {
		return store.Account{}, ErrUnavailable
	}
	if err := s.id.AddressThrottled(ctx, clientAddr); err != nil {
		return store.Account{}, err
	}
	parsed, err := parseAssertion(response)
	if err != nil {
		return store.Account{}, err
	}
	sd, err := s.take(ctx, handle, store.CeremonyLogin, "")
	if err != nil {
		return store.Account{}, err
	}
	var (
		found   store.Passkey
		acct    store.Account
		unknown bool
	)
	handler := func(rawID, userHandle []byte) (webauthn.User, error) {
		p, err := s.store.GetPasskeyByCredentialID(ctx, rawID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && p.AccountID != string(userHandle)) {
			unknown = true
			return nil, ErrUnknownPasskey
		}
		if err != nil {
			return nil, err
		}
		a, err := s.store.GetAccount(ctx, p.AccountID)
		if err != nil {
			return nil, err
		}
		c, err := decode(p)
		if err != nil {
			return nil, err
		}
		found, acct = p, a
		return user{acct: a, creds: []webauthn.Credential{c}}, nil
	}
	_, cred, err := s.wa.ValidatePasskeyLogin(handler, sd, parsed)
	if err != nil {
		if ferr := s.id.CountAddressFailure(ctx, clientAddr); ferr != nil {
			return store.Account{}, ferr
		}
		if unknown {
			return store.Account{}, ErrUnknownPasskey
		}
		return store.Account{}, ErrNotVerified.Wrap(err)
	}
	if acct.Disabled || acct.DeletedAt != nil {
		return store.Account{}, identity.ErrAccountDisabled
	}
	if err := s.used(ctx, found, cred, clientAddr); err != nil {
		return store.Account{}, err
	}
	return acct, nil
}

// used records a verified assertion: a credential whose signature counter
// did not advance is refused (ErrPossibleClone, counted as a failed
// sign-in) and its stored counter kept; otherwise the new counter, flags
// and the last use are stored.
func (s *Service) used(ctx context.Context, p store.Passkey, cred *webauthn.Credential, clientAddr string) error {
	if cred.Authenticator.CloneWarning {
		if err := s.id.CountAddressFailure(ctx, clientAddr); err != nil {
			return err
		}
		return ErrPossibleClone
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return fmt.Errorf("passkey: encode credential: %w", err)
	}
	now := store.UTC(s.clock())
	_, err = s.store.UpdatePasskey(ctx, p.ID, func(cur store.Passkey) (store.Passkey, error) {
		c, err := decode(cur)
		if err != nil {
			return cur, err
		}
		if c.Authenticator.SignCount > cred.Authenticator.SignCount {
			return cur, ErrPossibleClone // a later use got here first with a higher counter
		}
		cur.Credential, cur.LastUsedAt = data, &now
		return cur, nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrUnknownPasskey // removed meanwhile
	}
	if err != nil && !errors.Is(err, ErrPossibleClone) {
		return fmt.Errorf("passkey: record use: %w", err)
	}
	return err
}

// BeginReauth starts confirming a grave change (deleting the account)
// with one of the account's passkeys; user verification is required.
func (s *Service) BeginReauth(ctx context.Context, acct store.Account) (Ceremony, error) {
	if !s.Available() {
		return Ceremony{}, ErrUnavailable
	}
	u, _, err := s.loadUser(ctx, acct)
	if err != nil {
		return Ceremony{}, err
	}
	if len(u.creds) == 0 {
		return Ceremony{}, ErrNoPasskeys
	}
	assertion, sd, err := s.wa.BeginLogin(u, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Ceremony{}, fmt.Errorf("passkey: begin confirmation: %w", err)
	}
	return s.start(ctx, store.CeremonyReauth, acct.ID, assertion, sd)
}

// FinishReauth verifies the answer to a confirmation ceremony of this
// account: nil only when one of its passkeys verified with user
// verification. Throttled and counted like FinishLogin.
func (s *Service) FinishReauth(ctx context.Context, acct store.Account, handle string, response []byte, clientAddr string) error {
	if !s.Available() {
		return ErrUnavailable
	}
	if err := s.id.AddressThrottled(ctx, clientAddr); err != nil {
		return err
	}
	parsed, err := parseAssertion(response)
	if err != nil {
		return err
	}
	sd, err := s.take(ctx, handle, store.CeremonyReauth, acct.ID)
	if err != nil {
		return err
	}
	u, ps, err := s.loadUser(ctx, acct)
	if err != nil {
		return err
	}
	cred, err := s.wa.ValidateLogin(u, sd, parsed)
	if err != nil {
		if ferr := s.id.CountAddressFailure(ctx, clientAddr); ferr != nil {
			return ferr
		}
		var unknown *protocol.ErrorUnknownCredential
		if errors.As(err, &unknown) {
			return ErrUnknownPasskey
		}
		return ErrNotVerified.Wrap(err)
	}
	for _, p := range ps {
		if bytes.Equal(p.CredentialID, cred.ID) {
			return s.used(ctx, p, cred, clientAddr)
		}
	}
	return ErrUnknownPasskey
}

// List returns the account's passkeys, oldest first.
func (s *Service) List(ctx context.Context, accountID string) ([]store.Passkey, error) {
	ps, err := s.store.ListPasskeys(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("passkey: list: %w", err)
	}
	return ps, nil
}

// Rename gives one of the account's passkeys a new name (see CleanName).
// Another account's passkey answers ErrNotFound.
func (s *Service) Rename(ctx context.Context, accountID, id, name string) (store.Passkey, error) {
	n, err := CleanName(name, s.clock())
	if err != nil {
		return store.Passkey{}, err
	}
	p, err := s.store.UpdatePasskey(ctx, id, func(p store.Passkey) (store.Passkey, error) {
		if p.AccountID != accountID {
			return p, ErrNotFound
		}
		p.Name = n
		return p, nil
	})
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrNotFound) {
		return store.Passkey{}, ErrNotFound
	}
	if err != nil {
		return store.Passkey{}, fmt.Errorf("passkey: rename: %w", err)
	}
	return p, nil
}

// Remove deletes one of the account's passkeys; it no longer signs in.
// Another account's passkey answers ErrNotFound.
func (s *Service) Remove(ctx context.Context, accountID, id string) error {
	err := s.store.DeletePasskey(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("passkey: remove: %w", err)
	}
	return nil
}
