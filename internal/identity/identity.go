package identity

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Limits on passwords.
const (
	MinPasswordLength = 10
	MaxPasswordLength = 256 // bounds the work an argon2id hash may be asked to do
	maxEmailLength    = 254
)

// SessionLifetime is how long a sign-in lasts.
const SessionLifetime = 12 * time.Hour

// SignUpNotice is what a page shows after every accepted sign-up, whether
// the address was new or already registered (see the package doc).
const SignUpNotice = "If this address was not registered yet, your Linkslot account now exists. " +
	"Sign in below with the address and the password you chose. " +
	"If it was already registered, sign in with that account's password."

// Store is the part of store.Store the Service uses.
type Store interface {
	store.Accounts
	store.WebSessions
	store.Links
	store.Activities
	store.AccountTokens
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// Tx is what the Service reads and writes in its transactions (sign-up,
// password changes, e-mail links): accounts, their sessions and links,
// and the e-mail that tells of the change (MailTx).
type Tx interface {
	CreateAccount(ctx context.Context, a store.Account) error
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetAccountByEmail(ctx context.Context, email string) (store.Account, error)
	UpdateAccount(ctx context.Context, id string, fn func(store.Account) (store.Account, error)) (store.Account, error)
	DeleteAccountWebSessions(ctx context.Context, accountID, keepIDHash string) error
	store.AccountTokens
	MailTx
}

var _ Tx = store.Store(nil)

// inTx runs fn in one transaction (see Tx).
func (s *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// Hasher hashes and verifies passwords. The default is password.Default
// (argon2id in the process's bounded hashing slots). Hash and Check answer
// password.ErrBusy when no slot is free in time; Check's upgraded, when not
// empty, replaces the stored hash (parameters raised since it was made).
type Hasher interface {
	Hash(ctx context.Context, pw string) (string, error)
	Check(ctx context.Context, hash, pw string) (ok bool, upgraded string, err error)
}

var _ Hasher = (*password.Pool)(nil)

// Config configures a Service. Only Store is required.
type Config struct {
	Store Store
	// Clock defaults to store.SystemClock.
	Clock store.Clock
	// Hasher defaults to password.Default (argon2id, bounded slots).
	Hasher Hasher
	// Throttle bounds failed sign-ins; zero fields take the defaults.
	Throttle ThrottlePolicy
	// RateWindows, when set, keeps the throttle's counts in the database,
	// shared by every replica (PostgreSQL); nil counts in this process.
	RateWindows store.RateWindows
	// SessionLifetime defaults to SessionLifetime (12 h).
	SessionLifetime time.Duration
	// Mailer queues account e-mail (verification and reset links,
	// notices). Without one, sign-up creates unverified accounts that
	// cannot be verified, and reset links cannot be sent
	// (ErrMailUnavailable).
	Mailer Mailer
	// Issuer is the server's public URL, the base of the links in e-mails.
	Issuer string
}

// Service is the identity domain. It is safe for concurrent use.
type Service struct {
	store     Store
	clock     store.Clock
	hasher    Hasher
	throttle  *throttle
	lifetime  time.Duration
	dummyHash string
	mailer    Mailer
	issuer    string
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("identity: Config.Store is required")
	}
	s := &Service{store: cfg.Store, clock: cfg.Clock, hasher: cfg.Hasher,
		throttle: newThrottle(cfg.Throttle, cfg.RateWindows), lifetime: cfg.SessionLifetime, mailer: cfg.Mailer,
		issuer: strings.TrimSuffix(cfg.Issuer, "/")}
	if s.clock == nil {
		s.clock = store.SystemClock
	}
	if s.hasher == nil {
		s.hasher = password.Default
	}
	if s.lifetime <= 0 {
		s.lifetime = SessionLifetime
	}
	// Unknown addresses are verified against this hash so that they take
	// as long as known ones.
	h, err := s.hasher.Hash(context.Background(), store.RandomString(24))
	if err != nil {
		return nil, fmt.Errorf("identity: dummy hash: %w", err)
	}
	s.dummyHash = h
	return s, nil
}

// NormalizeEmail trims and lower-cases an address, puts it in NFC, and
// checks that it is a plain address (no display name) with a dotted domain
// name (docs/reference.md §12). Invisible characters (zero-width space and
// joiners U+200B–U+200D, word joiner U+2060, U+FEFF, soft hyphen U+00AD),
// control and bidi characters, and IP-literal domains ("[192.0.2.1]",
// "192.0.2.1") are refused: an address that looks like another account's
// must not become a second account. Uniqueness is decided on its result.
func NormalizeEmail(email string) (string, error) {
	e := canonicalEmail(email)
	if e == "" || len(e) > maxEmailLength || strings.ContainsAny(e, " \t\r\n<>\"") {
		return "", ErrInvalidEmail
	}
	if _, bad := textcheck.Control(e, false); bad || strings.ContainsAny(e, invisible) {
		return "", ErrInvalidEmail.WithMessage("The email address contains an invisible or control character; type it again without it.")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || a.Name != "" {
		return "", ErrInvalidEmail
	}
	at := strings.LastIndexByte(e, '@')
	domain := e[at+1:]
	if at <= 0 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", ErrInvalidEmail
	}
	if strings.HasPrefix(domain, "[") || net.ParseIP(domain) != nil {
		return "", ErrInvalidEmail.WithMessage("Enter an email address with a domain name, such as name@example.com, not an IP address.")
	}
	return e, nil
}

// invisible are the characters that show nothing and would make an address
// look like another: zero-width space, non-joiner and joiner, word joiner,
// zero-width no-break space and soft hyphen.
const invisible = "\u200b\u200c\u200d\u2060\ufeff\u00ad"

// canonicalEmail is the form an address is looked up by: trimmed,
// lower-cased, NFC. Sign-in and password reset use it without
// NormalizeEmail's refusals, so that every lookup meets the stored form.
func canonicalEmail(email string) string {
	return norm.NFC.String(strings.ToLower(strings.TrimSpace(email)))
}

// CheckPassword reports why a new password is refused, wrapping
// ErrWeakPassword, or nil.
func CheckPassword(email, pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPasswordLength:
		return ErrWeakPassword.WithMessage("Choose a stronger password: use at least %d characters.", MinPasswordLength)
	case len(pw) > MaxPasswordLength:
		return ErrWeakPassword.WithMessage("Choose a stronger password: use at most %d characters.", MaxPasswordLength)
	case strings.EqualFold(strings.TrimSpace(pw), strings.TrimSpace(email)):
		return ErrWeakPassword.WithMessage("Choose a stronger password: it must not be your email address.")
	case strings.TrimSpace(pw) == "":
		return ErrWeakPassword.WithMessage("Choose a stronger password: it must not be only spaces.")
	}
	return nil
}

// mailOff reports whether the Mailer says e-mail is switched off
// (LINKSLOT_SMTP_URL=off).
func (s *Service) mailOff() bool { return s.mailer != nil && s.mailer.MailOff() }

// SignUp creates an account. With e-mail switched off it answers
// ErrMailUnavailable and creates nothing: administrators create accounts
// (verified) on such a server. A duplicate address answers
// ErrEmailUnavailable after the same work as a success; callers show both
// the same way.
func (s *Service) SignUp(ctx context.Context, email, pw string) (store.Account, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return store.Account{}, err
	}
	if err := CheckPassword(e, pw); err != nil {
		return store.Account{}, err
	}
	if s.mailOff() {
		// The address could never be confirmed, so the account could never
		// approve an app. Refused before the store is read, so the answer
		// is the same whether or not the address has an account.
		return store.Account{}, ErrMailUnavailable
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return store.Account{}, hashError(err)
	}
	now := store.UTC(s.clock())
	a := store.Account{ID: store.NewID("acct"), Email: e, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.CreateAccount(ctx, a); err != nil {
			return err
		}
		if s.mailer == nil {
			return nil
		}
		return s.queueVerification(ctx, tx, a)
	})
	if err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return store.Account{}, ErrEmailUnavailable
		}
		return store.Account{}, fmt.Errorf("identity: create account: %w", err)
	}
	return a, nil
}

// Authenticate checks an email and password, throttled per account and
// client address, per client address, and by the account's ceiling
// (ThrottlePolicy; docs/reference.md §12). It answers ErrInvalidCredentials, ErrAccountDisabled,
// ErrBusy (no hashing slot in time: nothing was checked or counted), or a
// ErrThrottled with the wait (RetryAfter). A right password whose hash was
// made with older parameters has its hash upgraded.
func (s *Service) Authenticate(ctx context.Context, email, pw, clientAddr string) (store.Account, error) {
	now := s.clock()
	e := canonicalEmail(email)
	acctKey, pairKey, addrKey := "acct:"+e, signInPairKey(e, clientAddr), "addr:"+clientAddr
	if err := s.signInThrottled(ctx, acctKey, pairKey, addrKey, now); err != nil {
		return store.Account{}, err
	}
	acct, err := s.store.GetAccountByEmail(ctx, e)
	hash := acct.PasswordHash
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		hash = s.dummyHash
	default:
		return store.Account{}, fmt.Errorf("identity: look up account: %w", err)
	}
	match, upgraded, herr := s.hasher.Check(ctx, hash, pw)
	if herr != nil {
		return store.Account{}, hashError(herr)
	}
	ok := match && err == nil && len(pw) <= MaxPasswordLength
	if !ok {
		if err := errors.Join(s.throttle.fail(ctx, acctKey, now), s.throttle.fail(ctx, pairKey, now),
			s.throttle.fail(ctx, addrKey, now)); err != nil {
			return store.Account{}, err
		}
		return store.Account{}, ErrInvalidCredentials
	}
	// The account's ceiling count stays: a success from one address says
	// nothing about the guesses from the others.
	if err := s.throttle.reset(ctx, pairKey); err != nil {
		return store.Account{}, fmt.Errorf("identity: clear sign-in failures: %w", err)
	}
	if acct.Disabled {
		return store.Account{}, ErrAccountDisabled
	}
	if upgraded != "" {
		old := acct.PasswordHash
		// Only if the password did not change meanwhile. A failure here
		// leaves the old hash, which the next sign-in upgrades.
		if a, uerr := s.store.UpdateAccount(ctx, acct.ID, func(a store.Account) (store.Account, error) {
			if a.PasswordHash == old {
				a.PasswordHash = upgraded
			}
			return a, nil
		}); uerr == nil {
			acct = a
		}
	}
	return acct, nil
}

// hashError maps the hasher's refusals to the Service's errors.
func hashError(err error) error {
	if errors.Is(err, password.ErrBusy) {
		return ErrBusy
	}
	return fmt.Errorf("identity: password hash: %w", err)
}

// signInPairKey is the throttle's key for the failures of one account
// (normalized address e) from one client address.
func signInPairKey(e, clientAddr string) string {
	return "pair:" + clientAddr + "|" + e
}

// signInThrottled answers ErrThrottled (with the wait) when a sign-in for
// the account from clientAddr must wait, and nil when it may try now: the
// pair (account, client address) waits after AccountLimit failures, or
// after one once the account has AccountCeiling failures from all
// addresses together; the client address waits after AddressLimit
// failures for any account. Failures from other addresses alone never
// make an address with none wait.
func (s *Service) signInThrottled(ctx context.Context, acctKey, pairKey, addrKey string, now time.Time) error {
	p := s.throttle.policy
	limit := p.AccountLimit
	n, _, err := s.throttle.count(ctx, acctKey, now)
	if err != nil {
		return err
	}
	if n >= p.AccountCeiling {
		limit = 1
	}
	return s.throttledAt(ctx, now, throttleKey{pairKey, limit}, throttleKey{addrKey, p.AddressLimit})
}

// throttleKey is one key of the throttle with its limit.
type throttleKey struct {
	key   string
	limit int
}

// throttledAt answers ErrThrottled with the longest wait of keys, or nil
// when none must wait.
func (s *Service) throttledAt(ctx context.Context, now time.Time, keys ...throttleKey) error {
	var at time.Time
	for _, k := range keys {
		a, err := s.throttle.retryAt(ctx, k.key, k.limit, now)
		if err != nil {
			return err
		}
		if a.After(at) {
			at = a
		}
	}
	if !at.IsZero() {
		return throttledFor(at.Sub(now))
	}
	return nil
}

// throttled answers ErrThrottled (with the wait) when the account key or the address
// key must wait, and nil when both may try now.
func (s *Service) throttled(ctx context.Context, acctKey, addrKey string, now time.Time) error {
	p := s.throttle.policy
	return s.throttledAt(ctx, now, throttleKey{acctKey, p.AccountLimit}, throttleKey{addrKey, p.AddressLimit})
}

// ChangePassword replaces the password after checking the current one, and
// ends every other session of the account (keepSession is the caller's own
// cookie value; empty ends them all). Wrong current passwords count as
// failed sign-ins for throttling.
func (s *Service) ChangePassword(ctx context.Context, accountID, current, next, keepSession, clientAddr string) error {
	acct, err := s.store.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("identity: change password: %w", err)
	}
	if err := s.checkOwnPassword(ctx, acct, current, clientAddr); err != nil {
		return err
	}
	if err := CheckPassword(acct.Email, next); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return hashError(err)
	}
	keep := ""
	if keepSession != "" {
		keep = store.HashSecret(keepSession)
	}
	return s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.UpdateAccount(ctx, accountID, func(a store.Account) (store.Account, error) {
			a.PasswordHash = hash
			return a, nil
		}); err != nil {
			return fmt.Errorf("identity: change password: %w", err)
		}
		if err := tx.DeleteAccountWebSessions(ctx, accountID, keep); err != nil {
			return fmt.Errorf("identity: end other sessions: %w", err)
		}
		if err := tx.DeleteAccountTokens(ctx, accountID, store.TokenResetPassword); err != nil {
			return fmt.Errorf("identity: drop reset links: %w", err)
		}
		return s.queuePasswordChanged(ctx, tx, acct)
	})
}

// ErrWrongPassword: the current password given to ChangePassword is wrong.
var ErrWrongPassword = problem.New(problem.CodeWrongPassword, "Your current password is not correct.")

// Session is a signed-in browser session. Token is the cookie value; it is
// only known at creation.
type Session struct {
	Token     string
	AccountID string
	ExpiresAt time.Time
	// AuthTime is when the person proved who they are (password or
	// passkey): the session's creation, since every sign-in starts a new
	// session and nothing extends one. ID tokens carry it as auth_time.
	AuthTime time.Time
}

// CreateSession starts a session for an account.
func (s *Service) CreateSession(ctx context.Context, accountID string) (Session, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Session{}, fmt.Errorf("identity: session randomness: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	now := store.UTC(s.clock())
	ws := store.WebSession{IDHash: store.HashSecret(tok), AccountID: accountID, CreatedAt: now, ExpiresAt: now.Add(s.lifetime)}
	if err := s.store.CreateWebSession(ctx, ws); err != nil {
		return Session{}, fmt.Errorf("identity: create session: %w", err)
	}
	return Session{Token: tok, AccountID: accountID, ExpiresAt: ws.ExpiresAt, AuthTime: ws.CreatedAt}, nil
}

// LookupSession returns the account of a live session, or ErrNoSession.
func (s *Service) LookupSession(ctx context.Context, token string) (store.Account, Session, error) {
	if token == "" || len(token) > 128 {
		return store.Account{}, Session{}, ErrNoSession
	}
	h := store.HashSecret(token)
	ws, acct, err := s.store.GetWebSessionAccount(ctx, h) // one statement
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, Session{}, ErrNoSession
	}
	if err != nil {
		return store.Account{}, Session{}, fmt.Errorf("identity: look up session: %w", err)
	}
	if !s.clock().Before(ws.ExpiresAt) {
		_ = s.store.DeleteWebSession(ctx, h)
		return store.Account{}, Session{}, ErrNoSession
	}
	if acct.Disabled {
		return store.Account{}, Session{}, ErrNoSession
	}
	return acct, Session{Token: token, AccountID: ws.AccountID, ExpiresAt: ws.ExpiresAt, AuthTime: ws.CreatedAt}, nil
}

// DeleteSession ends a session; an unknown token is not an error.
func (s *Service) DeleteSession(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	if err := s.store.DeleteWebSession(ctx, store.HashSecret(token)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("identity: delete session: %w", err)
	}
	return nil
}

// Connections returns the active links of an account, newest first.
func (s *Service) Connections(ctx context.Context, accountID string) ([]store.Link, error) {
	all, err := s.store.ListAccountLinks(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("identity: list links: %w", err)
	}
	out := all[:0]
	for _, l := range all {
		if l.Status == store.LinkActive {
			out = append(out, l)
		}
	}
	return out, nil
}

// Disconnect revokes one of the account's active links and every token
// issued for it. Another account's link, a revoked one, or an unknown id
// all answer ErrNotFound.
func (s *Service) Disconnect(ctx context.Context, accountID, linkID string) error {
	l, err := s.store.GetLink(ctx, linkID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (l.AccountID != accountID || l.Status != store.LinkActive)) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("identity: get link: %w", err)
	}
	if err := s.store.RevokeLink(ctx, linkID, s.clock()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		return fmt.Errorf("identity: revoke link: %w", err)
	}
	return nil
}

// ActivityPage is one page of an account's activity, newest first.
type ActivityPage struct {
	Entries []store.Activity
	Page    int // 1-based
	HasMore bool
}

// Activity returns page (1-based) of an account's activity, perPage
// entries per page (default 20, at most 100).
func (s *Service) Activity(ctx context.Context, accountID string, page, perPage int) (ActivityPage, error) {
	if page < 1 {
		page = 1
	}
	if perPage <= 0 || perPage > 100 {
		perPage = 20
	}
	if page > 100000 {
		page = 100000
	}
	rows, err := s.store.ListActivity(ctx, accountID, perPage, (page-1)*perPage)
	if err != nil {
		return ActivityPage{}, fmt.Errorf("identity: list activity: %w", err)
	}
	p := ActivityPage{Page: page, HasMore: len(rows) > perPage}
	if p.HasMore {
		rows = rows[:perPage]
	}
	p.Entries = rows
	return p, nil
}

// Reauthenticate checks the signed-in person's password again before a
// grave change (deleting the account). A wrong password answers
// ErrWrongPassword and counts as a failed sign-in for throttling.
func (s *Service) Reauthenticate(ctx context.Context, accountID, pw, clientAddr string) error {
	acct, err := s.store.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("identity: reauthenticate: %w", err)
	}
	return s.checkOwnPassword(ctx, acct, pw, clientAddr)
}

// checkOwnPassword checks a signed-in person's password (throttled like a
// sign-in): ErrWrongPassword, ErrThrottled, ErrBusy, or nil.
func (s *Service) checkOwnPassword(ctx context.Context, acct store.Account, pw, clientAddr string) error {
	if _, err := s.Authenticate(ctx, acct.Email, pw, clientAddr); err != nil {
		if errors.Is(err, ErrInvalidCredentials) {
			return ErrWrongPassword
		}
		return err
	}
	return nil
}
