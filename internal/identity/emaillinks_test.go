package identity_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// mailbox keeps the account e-mails a Service queues, and fails the
// transaction it is given when fail is set (so a failed queue is seen to
// roll the change back).
type mailbox struct {
	mu    sync.Mutex
	mails []identity.Mail
	fail  bool
}

func (m *mailbox) MailOff() bool { return false }

func (m *mailbox) QueueMail(ctx context.Context, tx identity.MailTx, mail identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("outbox unavailable")
	}
	m.mails = append(m.mails, mail)
	return nil
}

func (m *mailbox) all() []identity.Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]identity.Mail(nil), m.mails...)
}

var linkRE = regexp.MustCompile(`https://linkslot\.example(/[a-z/]+)\?token=([A-Za-z0-9_%-]+)`)

// lastLink returns the path and token of the link in the newest e-mail of
// a topic.
func (m *mailbox) lastLink(t *testing.T, topic string) (string, string) {
	t.Helper()
	ms := m.all()
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Topic != topic {
			continue
		}
		sub := linkRE.FindStringSubmatch(ms[i].Text)
		if sub == nil {
			t.Fatalf("no link in %q", ms[i].Text)
		}
		tok, err := url.QueryUnescape(sub[2])
		if err != nil {
			t.Fatal(err)
		}
		return sub[1], tok
	}
	t.Fatalf("no %s e-mail among %d", topic, len(ms))
	return "", ""
}

func newMailingService(t *testing.T, s *sqlstore.Store, clk *fakeClock) (*identity.Service, *mailbox) {
	t.Helper()
	mb := &mailbox{}
	svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{}, Mailer: mb, Issuer: "https://linkslot.example/"})
	if err != nil {
		t.Fatal(err)
	}
	return svc, mb
}

// signedUp is a mailing Service with one account just signed up (its
// address not yet verified).
func signedUp(t *testing.T, s *sqlstore.Store) (*fakeClock, *identity.Service, *mailbox, store.Account) {
	t.Helper()
	clk := start()
	svc, mb := newMailingService(t, s, clk)
	a, err := svc.SignUp(context.Background(), "ada@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	return clk, svc, mb, a
}

func TestVerifyEmail(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk, svc, mb, a := signedUp(t, s)
		if identity.EmailVerified(a) {
			t.Fatal("a new sign-up is verified")
		}
		ms := mb.all()
		if len(ms) != 1 || ms[0].To != "ada@example.com" || ms[0].Topic != identity.TopicVerifyEmail {
			t.Fatalf("mails after sign-up = %+v", ms)
		}
		path, tok := mb.lastLink(t, identity.TopicVerifyEmail)
		if path != "/verify" {
			t.Errorf("link path %q", path)
		}
		// Only the hash is stored.
		if _, err := s.GetAccountToken(ctx, tok); !errors.Is(err, store.ErrNotFound) {
			t.Error("the token itself is a key in the store")
		}
		// A duplicate sign-up sends nothing.
		if _, err := svc.SignUp(ctx, "ada@example.com", "another long password"); !errors.Is(err, identity.ErrEmailUnavailable) {
			t.Fatal(err)
		}
		if len(mb.all()) != 1 {
			t.Error("a duplicate sign-up sent an e-mail")
		}

		for _, bad := range []string{"", tok + "x", tok[:len(tok)-1], strings.ToUpper(tok), strings.Repeat("a", 500)} {
			if _, err := svc.VerifyEmail(ctx, bad); !errors.Is(err, identity.ErrLinkInvalid) {
				t.Errorf("VerifyEmail(tampered %q) = %v", bad, err)
			}
		}
		got, err := svc.VerifyEmail(ctx, tok)
		if err != nil || !identity.EmailVerified(got) {
			t.Fatalf("VerifyEmail = %+v, %v", got, err)
		}
		if _, err := svc.VerifyEmail(ctx, tok); !errors.Is(err, identity.ErrLinkUsed) {
			t.Errorf("second use = %v", err)
		}
		// A verified account asks for nothing more.
		if err := svc.ResendVerification(ctx, a.ID); err != nil || len(mb.all()) != 1 {
			t.Errorf("resend for a verified account = %v, %d mails", err, len(mb.all()))
		}

		// Expiry after 24 h, and the resend limit.
		b, err := svc.SignUp(ctx, "bob@example.com", pw)
		if err != nil {
			t.Fatal(err)
		}
		_, old := mb.lastLink(t, identity.TopicVerifyEmail)
		clk.Advance(identity.VerifyLinkLifetime)
		if _, err := svc.VerifyEmail(ctx, old); !errors.Is(err, identity.ErrLinkExpired) {
			t.Errorf("after 24 h = %v", err)
		}
		if acct, _ := s.GetAccount(ctx, b.ID); identity.EmailVerified(acct) {
			t.Error("an expired link verified the address")
		}
		for i := 0; i < identity.MaxVerifyMailsPerHour; i++ {
			if err := svc.ResendVerification(ctx, b.ID); err != nil {
				t.Fatalf("resend %d: %v", i, err)
			}
		}
		if err := svc.ResendVerification(ctx, b.ID); !errors.Is(err, identity.ErrTooManyMails) {
			t.Errorf("resend over the limit = %v", err)
		}
		_, fresh := mb.lastLink(t, identity.TopicVerifyEmail)
		if _, err := svc.VerifyEmail(ctx, fresh); err != nil {
			t.Errorf("the newest link: %v", err)
		}

		// A failed queue rolls the sign-up back: no account without its link.
		mb.fail = true
		if _, err := svc.SignUp(ctx, "cleo@example.com", pw); err == nil {
			t.Error("sign-up succeeded without its e-mail")
		}
		if _, err := s.GetAccountByEmail(ctx, "cleo@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the account exists without its e-mail: %v", err)
		}
	})
}

func TestPasswordReset(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk, svc, mb, a := signedUp(t, s)
		sess, err := svc.CreateSession(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		before := len(mb.all())

		// An unknown address: the same answer, and no e-mail.
		if err := svc.RequestPasswordReset(ctx, "nobody@example.com", "192.0.2.1"); err != nil {
			t.Fatalf("unknown address = %v", err)
		}
		if len(mb.all()) != before {
			t.Fatal("an e-mail was sent for an unknown address")
		}
		if err := svc.RequestPasswordReset(ctx, " ADA@example.com ", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		path, tok := mb.lastLink(t, identity.TopicPasswordReset)
		if path != "/password/reset" {
			t.Errorf("link path %q", path)
		}
		if err := svc.CheckResetLink(ctx, tok); err != nil {
			t.Fatalf("CheckResetLink = %v", err)
		}
		if err := svc.CheckResetLink(ctx, tok+"A"); !errors.Is(err, identity.ErrLinkInvalid) {
			t.Errorf("tampered = %v", err)
		}
		// A verification link is not a reset link.
		_, vtok := mb.lastLink(t, identity.TopicVerifyEmail)
		if _, err := svc.ResetPassword(ctx, vtok, "a brand new passphrase", "192.0.2.1"); !errors.Is(err, identity.ErrLinkInvalid) {
			t.Errorf("verification link used for reset = %v", err)
		}

		// A weak password changes nothing and leaves the link usable.
		if _, err := svc.ResetPassword(ctx, tok, "short", "192.0.2.1"); !errors.Is(err, identity.ErrWeakPassword) {
			t.Fatalf("weak = %v", err)
		}
		if _, _, err := svc.LookupSession(ctx, sess.Token); err != nil {
			t.Fatal("a refused reset ended the session")
		}
		const next = "a brand new passphrase"
		got, err := svc.ResetPassword(ctx, tok, next, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if !identity.EmailVerified(got) {
			t.Error("a reset through the mailbox did not verify the address")
		}
		if _, _, err := svc.LookupSession(ctx, sess.Token); !errors.Is(err, identity.ErrNoSession) {
			t.Error("the session survived the reset")
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "192.0.2.1"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Errorf("old password = %v", err)
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", next, "192.0.2.1"); err != nil {
			t.Errorf("new password = %v", err)
		}
		if _, err := svc.ResetPassword(ctx, tok, "yet another passphrase", "192.0.2.1"); !errors.Is(err, identity.ErrLinkUsed) {
			t.Errorf("reuse = %v", err)
		}
		ms := mb.all()
		if last := ms[len(ms)-1]; last.Topic != identity.TopicPasswordChanged || last.To != "ada@example.com" {
			t.Errorf("last mail = %+v, want the password-changed notice", last)
		}

		// 30 minutes.
		if err := svc.RequestPasswordReset(ctx, "ada@example.com", "192.0.2.2"); err != nil {
			t.Fatal(err)
		}
		_, tok2 := mb.lastLink(t, identity.TopicPasswordReset)
		clk.Advance(identity.ResetLinkLifetime)
		if _, err := svc.ResetPassword(ctx, tok2, "one more passphrase", "192.0.2.1"); !errors.Is(err, identity.ErrLinkExpired) {
			t.Errorf("after 30 min = %v", err)
		}

		// Throttled like sign-in, known address or not.
		clk.Advance(time.Hour)
		for _, e := range []string{"ada@example.com", "nobody@example.com"} {
			var err error
			for i := 0; i < 6 && err == nil; i++ {
				err = svc.RequestPasswordReset(ctx, e, "198.51.100."+string(rune('1'+i)))
			}
			if wait, throttled := identity.RetryAfter(err); !throttled || wait <= 0 {
				t.Errorf("%s: the 6th request = %v, want throttled", e, err)
			}
		}
	})
}

func TestPasswordChangeMails(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	svc, mb := newMailingService(t, s, start())
	a, err := svc.SignUp(ctx, "ada@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.ChangePassword(ctx, a.ID, pw, "a changed passphrase", "", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	ms := mb.all()
	if last := ms[len(ms)-1]; last.Topic != identity.TopicPasswordChanged || !strings.Contains(last.Text, "/password/forgot") {
		t.Errorf("last mail = %+v", last)
	}
	for _, m := range ms {
		if strings.Contains(m.Text, pw) || strings.Contains(m.Text, "a changed passphrase") {
			t.Errorf("a password is in an e-mail: %+v", m)
		}
	}
}

// TestMailOff: with e-mail off (LINKSLOT_SMTP_URL=off) sign-up is refused
// with ErrMailUnavailable and creates nothing, for a new address and an
// existing one alike; a password change still goes through, without its
// notice, and the new password signs in while the old one does not.
func TestMailOff(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk, _, _, existing := signedUp(t, s)
		off, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{}, Mailer: unavailableMailer{}, Issuer: "https://linkslot.example/"})
		if err != nil {
			t.Fatal(err)
		}
		for _, addr := range []string{"new.person@example.com", existing.Email} {
			if _, err := off.SignUp(ctx, addr, pw); !errors.Is(err, identity.ErrMailUnavailable) {
				t.Errorf("sign-up of %s with e-mail off = %v, want ErrMailUnavailable", addr, err)
			}
		}
		if _, err := s.GetAccountByEmail(ctx, "new.person@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an account was created with e-mail off: %v", err)
		}
		if err := off.ChangePassword(ctx, existing.ID, pw, "a changed passphrase", "", "192.0.2.1"); err != nil {
			t.Fatalf("password change with e-mail off: %v", err)
		}
		if _, err := off.Authenticate(ctx, existing.Email, "a changed passphrase", "192.0.2.1"); err != nil {
			t.Errorf("new password: %v", err)
		}
		if _, err := off.Authenticate(ctx, existing.Email, pw, "192.0.2.1"); err == nil {
			t.Error("the old password still signs in")
		}
	})
}
