package identity

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Lifetimes of the single-use e-mail links.
const (
	VerifyLinkLifetime = 24 * time.Hour
	ResetLinkLifetime  = 30 * time.Minute
)

// MaxVerifyMailsPerHour bounds how many verification e-mails one account
// can ask for in an hour (sign-up's counts).
const MaxVerifyMailsPerHour = 5

// Mail topics: what an account e-mail is about.
const (
	TopicVerifyEmail     = "account.verify"
	TopicPasswordReset   = "password.reset"
	TopicPasswordChanged = "password.changed"
	TopicAppConnected    = "link.connected"
)

// Mail is one e-mail to a person about their account.
type Mail struct {
	To      string
	Topic   string // one of the Topic constants
	Subject string
	Text    string
}

// Mailer queues an account e-mail inside the caller's transaction (tx), so
// that it is sent exactly when the change it tells of commits.
// internal/notify's outbox implements it in the servers.
type Mailer interface {
	QueueMail(ctx context.Context, tx MailTx, m Mail) error
	// MailOff reports whether e-mail is switched off
	// (LINKSLOT_SMTP_URL=off): sign-up then creates nothing.
	MailOff() bool
}

// MailTx is what a Mailer writes through in the caller's transaction: the
// outbox's queue.
type MailTx interface {
	EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error
}

// Errors of the e-mail links (internal/problem). Messages are sentences
// safe to show.
var (
	// ErrLinkInvalid: no such link (mistyped, tampered, or for another
	// purpose).
	ErrLinkInvalid = problem.New(problem.CodeEmailLinkInvalid, "This link is not valid: it may be incomplete or mistyped.")
	// ErrLinkExpired: the link is authentic but too old.
	ErrLinkExpired = problem.New(problem.CodeEmailLinkExpired, "This link has expired.")
	// ErrLinkUsed: the link was used already; links work once.
	ErrLinkUsed = problem.New(problem.CodeEmailLinkUsed, "This link has been used already.")
	// ErrMailUnavailable: the server has no way to send e-mail.
	ErrMailUnavailable = problem.New(problem.CodeMailUnavailable, "Linkslot cannot send e-mail right now.")
	// ErrTooManyMails: too many verification e-mails asked for.
	ErrTooManyMails = problem.New(problem.CodeTooManyMails, "Too many verification e-mails were sent to this address in the last hour; use the newest one, or try again later.")
)

// EmailVerified reports whether the account's address is verified.
func EmailVerified(a store.Account) bool { return a.EmailVerifiedAt != nil }

func (s *Service) link(path, token string) string {
	return s.issuer + path + "?token=" + url.QueryEscape(token)
}

// newAccountToken creates a single-use link token of a purpose for the
// account and returns the token (only its hash is stored).
func (s *Service) newAccountToken(ctx context.Context, tx Tx, acct store.Account, purpose string, life time.Duration) (string, error) {
	tok := store.RandomString(32)
	now := store.UTC(s.clock())
	err := tx.CreateAccountToken(ctx, store.AccountToken{TokenHash: store.HashSecret(tok), AccountID: acct.ID, Purpose: purpose,
		Email: acct.Email, CreatedAt: now, ExpiresAt: now.Add(life)})
	if err != nil {
		return "", fmt.Errorf("identity: store link: %w", err)
	}
	return tok, nil
}

// queueVerification writes a verification link and its e-mail with tx.
func (s *Service) queueVerification(ctx context.Context, tx Tx, acct store.Account) error {
	if s.mailer == nil {
		return ErrMailUnavailable
	}
	tok, err := s.newAccountToken(ctx, tx, acct, store.TokenVerifyEmail, VerifyLinkLifetime)
	if err != nil {
		return err
	}
	return s.mailer.QueueMail(ctx, tx, Mail{To: acct.Email, Topic: TopicVerifyEmail, Subject: "Confirm your e-mail address for Linkslot",
		Text: "Hello,\n\nplease confirm that this is your e-mail address, so that you can connect apps to your Linkslot account:\n\n" +
			s.link("/verify", tok) + "\n\nThe link works once, for 24 hours. If you did not create a Linkslot account, ignore this e-mail: " +
			"nobody can connect apps to an account with this address until it is confirmed.\n"})
}

// ResendVerification sends a new verification link to an unverified
// account, at most MaxVerifyMailsPerHour an hour. A verified account
// answers nil and sends nothing.
func (s *Service) ResendVerification(ctx context.Context, accountID string) error {
	return s.inTx(ctx, func(tx Tx) error {
		acct, err := tx.GetAccount(ctx, accountID)
		if err != nil {
			return fmt.Errorf("identity: resend: %w", err)
		}
		if EmailVerified(acct) || acct.DeletedAt != nil {
			return nil
		}
		n, err := tx.CountAccountTokens(ctx, acct.ID, store.TokenVerifyEmail, s.clock().Add(-time.Hour))
		if err != nil {
			return fmt.Errorf("identity: resend: %w", err)
		}
		if n >= MaxVerifyMailsPerHour {
			return ErrTooManyMails
		}
		return s.queueVerification(ctx, tx, acct)
	})
}

// linkReader is what checkLink reads, in or out of a transaction.
type linkReader interface {
	GetAccountToken(ctx context.Context, tokenHash string) (store.AccountToken, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
}

// checkLink finds the link a token names and reports why it cannot be
// used: ErrLinkInvalid, ErrLinkExpired or ErrLinkUsed.
func (s *Service) checkLink(ctx context.Context, st linkReader, token, purpose string) (store.AccountToken, store.Account, error) {
	if token == "" || len(token) > 128 {
		return store.AccountToken{}, store.Account{}, ErrLinkInvalid
	}
	t, err := st.GetAccountToken(ctx, store.HashSecret(token))
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Purpose != purpose) {
		return store.AccountToken{}, store.Account{}, ErrLinkInvalid
	}
	if err != nil {
		return store.AccountToken{}, store.Account{}, fmt.Errorf("identity: look up link: %w", err)
	}
	acct, err := st.GetAccount(ctx, t.AccountID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (acct.DeletedAt != nil || acct.Email != t.Email)) {
		// The account is gone, or its address changed since the link was sent.
		return store.AccountToken{}, store.Account{}, ErrLinkInvalid
	}
	if err != nil {
		return store.AccountToken{}, store.Account{}, fmt.Errorf("identity: look up link account: %w", err)
	}
	switch {
	case t.UsedAt != nil:
		return t, acct, ErrLinkUsed
	case !s.clock().Before(t.ExpiresAt):
		return t, acct, ErrLinkExpired
	}
	return t, acct, nil
}

// useLink marks the link used with tx; a concurrent use that won answers
// ErrLinkUsed.
func (s *Service) useLink(ctx context.Context, tx Tx, t store.AccountToken) error {
	if err := tx.UseAccountToken(ctx, t.TokenHash, s.clock()); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return ErrLinkUsed
		}
		return fmt.Errorf("identity: use link: %w", err)
	}
	return nil
}

// VerifyEmail uses a verification link: the account's address becomes
// verified. It answers the account, or ErrLinkInvalid, ErrLinkExpired or
// ErrLinkUsed (with the account, so the page can offer a new link to a
// signed-in person), and changes nothing then.
func (s *Service) VerifyEmail(ctx context.Context, token string) (store.Account, error) {
	var out store.Account
	err := s.inTx(ctx, func(tx Tx) error {
		t, acct, err := s.checkLink(ctx, tx, token, store.TokenVerifyEmail)
		out = acct
		if err != nil {
			return err
		}
		if err := s.useLink(ctx, tx, t); err != nil {
			return err
		}
		out, err = tx.UpdateAccount(ctx, acct.ID, func(a store.Account) (store.Account, error) {
			if a.EmailVerifiedAt == nil {
				now := store.UTC(s.clock())
				a.EmailVerifiedAt = &now
			}
			return a, nil
		})
		return err
	})
	return out, err
}

// RequestPasswordReset sends a reset link to the address when it belongs
// to an active account, and does nothing otherwise: callers answer every
// request the same way. Requests are throttled like sign-ins, per address
// and per client address, whether or not the address exists.
func (s *Service) RequestPasswordReset(ctx context.Context, email, clientAddr string) error {
	now := s.clock()
	e := canonicalEmail(email)
	acctKey, addrKey := "reset-acct:"+e, "reset-addr:"+clientAddr
	if err := s.throttled(ctx, acctKey, addrKey, now); err != nil {
		return err
	}
	if err := errors.Join(s.throttle.fail(ctx, acctKey, now), s.throttle.fail(ctx, addrKey, now)); err != nil {
		return err
	}
	if _, err := NormalizeEmail(e); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx Tx) error {
		acct, err := tx.GetAccountByEmail(ctx, e)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (acct.Disabled || acct.DeletedAt != nil)) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("identity: reset: %w", err)
		}
		if s.mailer == nil {
			return ErrMailUnavailable
		}
		tok, err := s.newAccountToken(ctx, tx, acct, store.TokenResetPassword, ResetLinkLifetime)
		if err != nil {
			return err
		}
		return s.mailer.QueueMail(ctx, tx, Mail{To: acct.Email, Topic: TopicPasswordReset, Subject: "Reset your Linkslot password",
			Text: "Hello,\n\nsomeone (we hope you) asked to reset the password of your Linkslot account. Choose a new password here:\n\n" +
				s.link("/password/reset", tok) + "\n\nThe link works once, for 30 minutes, and signs you out everywhere. " +
				"If you did not ask for it, ignore this e-mail: your password stays as it is.\n"})
	})
}

// CheckResetLink reports whether a reset link can still be used (nil), or
// why not, without using it.
func (s *Service) CheckResetLink(ctx context.Context, token string) error {
	_, _, err := s.checkLink(ctx, s.store, token, store.TokenResetPassword)
	return err
}

// ResetPassword uses a reset link to set a new password. It ends every
// session of the account, invalidates its other reset links, marks the
// address verified (the person read mail sent to it), and e-mails the
// person that the password changed — all in one transaction. A refused
// link or password changes nothing. clientAddr is where the reset came
// from: the account's sign-in failures from it are forgiven.
func (s *Service) ResetPassword(ctx context.Context, token, pw, clientAddr string) (store.Account, error) {
	_, first, err := s.checkLink(ctx, s.store, token, store.TokenResetPassword)
	if err != nil {
		return store.Account{}, err
	}
	if err := CheckPassword(first.Email, pw); err != nil {
		return store.Account{}, err
	}
	// Hash before the transaction: it must not hold the write lock while
	// argon2id runs.
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return store.Account{}, hashError(err)
	}
	var out store.Account
	err = s.inTx(ctx, func(tx Tx) error {
		t, acct, err := s.checkLink(ctx, tx, token, store.TokenResetPassword)
		if err != nil {
			return err
		}
		if err := s.useLink(ctx, tx, t); err != nil {
			return err
		}
		out, err = tx.UpdateAccount(ctx, acct.ID, func(a store.Account) (store.Account, error) {
			a.PasswordHash = hash
			if a.EmailVerifiedAt == nil {
				now := store.UTC(s.clock())
				a.EmailVerifiedAt = &now
			}
			return a, nil
		})
		if err != nil {
			return fmt.Errorf("identity: reset password: %w", err)
		}
		if err := tx.DeleteAccountWebSessions(ctx, acct.ID, ""); err != nil {
			return fmt.Errorf("identity: end sessions: %w", err)
		}
		if err := tx.DeleteAccountTokens(ctx, acct.ID, store.TokenResetPassword); err != nil {
			return fmt.Errorf("identity: drop reset links: %w", err)
		}
		return s.queuePasswordChanged(ctx, tx, acct)
	})
	if err == nil {
		// The right person is back in: the account's count and its
		// failures from this address are forgiven, not other addresses'
		// (best-effort: the new password is set either way).
		_ = s.throttle.reset(ctx, "acct:"+out.Email)
		_ = s.throttle.reset(ctx, signInPairKey(out.Email, clientAddr))
	}
	return out, err
}

// QueueNotice queues through m, in tx, an e-mail that only tells of a
// change already made (password changed, app connected, passkey added):
// with no mailer, or a server that cannot send e-mail (ErrMailUnavailable,
// LINKSLOT_SMTP_URL=off), the change goes ahead without it. Any other
// failure is the change's failure, so the notice and the change commit
// together. Links a person must follow (verification, reset) are not
// notices: without e-mail they fail with ErrMailUnavailable.
func QueueNotice(ctx context.Context, m Mailer, tx MailTx, mail Mail) error {
	if m == nil {
		return nil
	}
	if err := m.QueueMail(ctx, tx, mail); err != nil && !errors.Is(err, ErrMailUnavailable) {
		return err
	}
	return nil
}

// queuePasswordChanged tells the person their password changed (a notice:
// the change itself must not fail for want of e-mail).
func (s *Service) queuePasswordChanged(ctx context.Context, tx Tx, acct store.Account) error {
	return QueueNotice(ctx, s.mailer, tx, Mail{To: acct.Email, Topic: TopicPasswordChanged, Subject: "Your Linkslot password was changed",
		Text: "Hello,\n\nthe password of your Linkslot account was changed on " + s.clock().UTC().Format("2 January 2006 at 15:04 UTC") +
			", and every browser signed in to your account was signed out.\n\nIf this was not you, reset your password now at " +
			s.issuer + "/password/forgot and check the apps connected at " + s.issuer + "/account/connections.\n"})
}
