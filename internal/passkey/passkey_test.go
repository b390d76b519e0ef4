package passkey_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/passkey/softkey"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

const issuer = "https://linkslot.example.com"

type cheapHasher struct{}

func (cheapHasher) Hash(_ context.Context, pw string) (string, error) { return "h:" + pw, nil }
func (cheapHasher) Check(_ context.Context, h, pw string) (bool, string, error) {
	return h == "h:"+pw, "", nil
}

type mailbox struct {
	mu    sync.Mutex
	mails []identity.Mail
	off   bool // answers identity.ErrMailUnavailable, as with LINKSLOT_SMTP_URL=off
}

func (m *mailbox) MailOff() bool { return false }

func (m *mailbox) QueueMail(_ context.Context, _ identity.MailTx, mail identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off {
		return identity.ErrMailUnavailable
	}
	m.mails = append(m.mails, mail)
	return nil
}

type fixture struct {
	t     testing.TB
	st    *sqlstore.Store
	clock *testkit.Clock
	svc   *passkey.Service
	mail  *mailbox
}

func newFixture(t testing.TB, st *sqlstore.Store, throttle identity.ThrottlePolicy) *fixture {
	t.Helper()
	f := &fixture{t: t, st: st, clock: testkit.NewClock(time.Now().UTC().Truncate(time.Second)), mail: &mailbox{}}
	id, err := identity.New(identity.Config{Store: st, Clock: f.clock.Now, Hasher: cheapHasher{}, Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	f.svc, err = passkey.New(passkey.Config{Store: st, Identity: id, Issuer: issuer, Clock: f.clock.Now, Mailer: f.mail})
	if err != nil {
		t.Fatal(err)
	}
	if !f.svc.Available() {
		t.Fatalf("passkeys unavailable for %s: %s", issuer, f.svc.UnavailableReason())
	}
	return f
}

func (f *fixture) account(email string) store.Account {
	f.t.Helper()
	now := f.clock.Now()
	a := store.Account{ID: store.NewID("acct"), Email: email, PasswordHash: "h:x", CreatedAt: now, UpdatedAt: now}
	if err := f.st.CreateAccount(context.Background(), a); err != nil {
		f.t.Fatal(err)
	}
	return a
}

// register adds a passkey on auth to acct and returns it.
func (f *fixture) register(auth *softkey.Authenticator, acct store.Account, name string) (store.Passkey, *softkey.Key) {
	f.t.Helper()
	ctx := context.Background()
	c, err := f.svc.BeginRegistration(ctx, acct)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, k, err := auth.Create(c.Options, issuer)
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := f.svc.FinishRegistration(ctx, acct, c.Handle, name, resp)
	if err != nil {
		f.t.Fatalf("finish registration: %v", err)
	}
	return p, k
}

// login signs in with whatever passkey auth offers.
func (f *fixture) login(auth *softkey.Authenticator) (store.Account, error) {
	f.t.Helper()
	ctx := context.Background()
	c, err := f.svc.BeginLogin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, _, err := auth.Get(c.Options, issuer)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.svc.FinishLogin(ctx, c.Handle, resp, "192.0.2.1")
}

func (f *fixture) passkeys(accountID string) []store.Passkey {
	f.t.Helper()
	ps, err := f.svc.List(context.Background(), accountID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ps
}

func TestAvailability(t *testing.T) {
	for _, tc := range []struct {
		issuer, rpID, origin, reason string
	}{
		{"https://linkslot.example.com", "linkslot.example.com", "https://linkslot.example.com", ""},
		{"https://Linkslot.Example.com:8443/", "linkslot.example.com", "https://linkslot.example.com:8443", ""},
		{"http://localhost:8080", "localhost", "http://localhost:8080", ""},
		{"http://app.localhost:8080", "app.localhost", "http://app.localhost:8080", ""},
		{"http://127.0.0.1:8080", "", "", "IP address 127.0.0.1"},
		{"https://[::1]:8443", "", "", "IP address ::1"},
		{"https://10.0.0.7", "", "", "IP address 10.0.0.7"},
		{"http://intranet:8080", "", "", "only allow passkeys on https addresses"},
		{"", "", "", "no public address"},
		{"ftp://example.com", "", "", "not an http or https URL"},
	} {
		rpID, origin, reason := passkey.Availability(tc.issuer)
		if rpID != tc.rpID || origin != tc.origin || (tc.reason == "") != (reason == "") || !strings.Contains(reason, tc.reason) {
			t.Errorf("Availability(%q) = %q, %q, %q; want %q, %q, reason with %q", tc.issuer, rpID, origin, reason, tc.rpID, tc.origin, tc.reason)
		}
	}
}

// With an IP-address issuer every ceremony is refused and nothing is
// stored.
func TestUnavailableRefusesCeremonies(t *testing.T) {
	st := sqltest.SQLite(t)
	id, err := identity.New(identity.Config{Store: st, Hasher: cheapHasher{}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := passkey.New(passkey.Config{Store: st, Identity: id, Issuer: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Available() || !strings.Contains(svc.UnavailableReason(), "IP address") {
		t.Fatalf("available %v, reason %q", svc.Available(), svc.UnavailableReason())
	}
	ctx := context.Background()
	acct := store.Account{ID: "acct_x", Email: "x@example.com"}
	if _, err := svc.BeginRegistration(ctx, acct); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("BeginRegistration: %v", err)
	}
	if _, err := svc.BeginLogin(ctx); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("BeginLogin: %v", err)
	}
	if _, err := svc.BeginReauth(ctx, acct); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("BeginReauth: %v", err)
	}
	if _, err := svc.FinishRegistration(ctx, acct, "h", "n", []byte("{}")); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("FinishRegistration: %v", err)
	}
	if _, err := svc.FinishLogin(ctx, "h", []byte("{}"), "192.0.2.1"); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("FinishLogin: %v", err)
	}
	if err := svc.FinishReauth(ctx, acct, "h", []byte("{}"), "192.0.2.1"); !errors.Is(err, passkey.ErrUnavailable) {
		t.Errorf("FinishReauth: %v", err)
	}
}

// The life of a passkey on both backends: registered (discoverable, with
// an e-mail), signed in with without an address, renamed, confirmed
// with, removed, and refused afterwards.
func TestPasskeyLifecycle(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		f := newFixture(t, st, identity.ThrottlePolicy{})
		ctx := context.Background()
		ada, bob := f.account("ada@example.com"), f.account("bob@example.com")
		phone := &softkey.Authenticator{}

		c, err := f.svc.BeginRegistration(ctx, ada)
		if err != nil {
			t.Fatal(err)
		}
		var opts struct {
			PublicKey struct {
				RP                     struct{ ID string }
				AuthenticatorSelection struct {
					ResidentKey      string `json:"residentKey"`
					RequireResident  bool   `json:"requireResidentKey"`
					UserVerification string `json:"userVerification"`
				} `json:"authenticatorSelection"`
			} `json:"publicKey"`
		}
		if err := json.Unmarshal([]byte(c.Options), &opts); err != nil {
			t.Fatal(err)
		}
		sel := opts.PublicKey.AuthenticatorSelection
		if opts.PublicKey.RP.ID != "linkslot.example.com" || sel.ResidentKey != "required" || !sel.RequireResident || sel.UserVerification != "preferred" {
			t.Errorf("creation options: %s", c.Options)
		}
		resp, _, err := phone.Create(c.Options, issuer)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.svc.FinishRegistration(ctx, ada, c.Handle, "  My phone ", resp)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "My phone" || p.LastUsedAt != nil || p.AccountID != ada.ID {
			t.Errorf("passkey %+v", p)
		}
		// The ceremony worked once.
		if _, err := f.svc.FinishRegistration(ctx, ada, c.Handle, "again", resp); !errors.Is(err, passkey.ErrCeremony) {
			t.Errorf("second finish: %v", err)
		}
		if ms := f.mail.mails; len(ms) != 1 || ms[0].To != "ada@example.com" || ms[0].Topic != identity.TopicPasskeyAdded || !strings.Contains(ms[0].Text, "“My phone”") {
			t.Errorf("mails %+v", ms)
		}
		// The same authenticator cannot register twice: it is excluded.
		c2, err := f.svc.BeginRegistration(ctx, ada)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := phone.Create(c2.Options, issuer); !errors.Is(err, softkey.ErrExcluded) {
			t.Errorf("the existing passkey was not excluded: %v", err)
		}

		// Discoverable sign-in, no address typed.
		f.clock.Add(time.Hour)
		got, err := f.login(phone)
		if err != nil || got.ID != ada.ID {
			t.Fatalf("sign-in: %v %v", got.ID, err)
		}
		ps := f.passkeys(ada.ID)
		if len(ps) != 1 || ps[0].LastUsedAt == nil || !ps[0].LastUsedAt.Equal(f.clock.Now()) {
			t.Errorf("last use not recorded: %+v", ps)
		}

		// Rename; another account cannot touch it.
		if _, err := f.svc.Rename(ctx, bob.ID, p.ID, "mine now"); !errors.Is(err, passkey.ErrNotFound) {
			t.Errorf("rename by another account: %v", err)
		}
		if err := f.svc.Remove(ctx, bob.ID, p.ID); !errors.Is(err, passkey.ErrNotFound) {
			t.Errorf("remove by another account: %v", err)
		}
		if _, err := f.svc.Rename(ctx, ada.ID, p.ID, "line\nbreak"); !errors.Is(err, passkey.ErrInvalidName) {
			t.Errorf("bad name: %v", err)
		}
		if _, err := f.svc.Rename(ctx, ada.ID, p.ID, strings.Repeat("é", passkey.MaxNameLength+1)); !errors.Is(err, passkey.ErrInvalidName) {
			t.Errorf("long name: %v", err)
		}
		if r, err := f.svc.Rename(ctx, ada.ID, p.ID, "Work laptop"); err != nil || r.Name != "Work laptop" {
			t.Errorf("rename: %v %+v", err, r)
		}
		if ps := f.passkeys(ada.ID); ps[0].Name != "Work laptop" {
			t.Errorf("name %q", ps[0].Name)
		}

		// Confirmation: only ada's own passkeys, user verification required.
		if _, err := f.svc.BeginReauth(ctx, bob); !errors.Is(err, passkey.ErrNoPasskeys) {
			t.Errorf("reauth without passkeys: %v", err)
		}
		rc, err := f.svc.BeginReauth(ctx, ada)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rc.Options, `"userVerification":"required"`) {
			t.Errorf("reauth options: %s", rc.Options)
		}
		rresp, _, err := phone.Get(rc.Options, issuer)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.FinishReauth(ctx, bob, rc.Handle, rresp, "192.0.2.1"); !errors.Is(err, passkey.ErrCeremony) {
			t.Errorf("ada's confirmation finished for bob: %v", err)
		}
		rc, _ = f.svc.BeginReauth(ctx, ada)
		rresp, _, _ = phone.Get(rc.Options, issuer)
		if err := f.svc.FinishReauth(ctx, ada, rc.Handle, rresp, "192.0.2.1"); err != nil {
			t.Errorf("reauth: %v", err)
		}
		noUV := &softkey.Authenticator{NoUV: true, Keys: phone.Keys}
		rc, _ = f.svc.BeginReauth(ctx, ada)
		rresp, _, _ = noUV.Get(rc.Options, issuer)
		if err := f.svc.FinishReauth(ctx, ada, rc.Handle, rresp, "192.0.2.1"); !errors.Is(err, passkey.ErrNotVerified) {
			t.Errorf("reauth without user verification: %v", err)
		}

		// Removed: it no longer signs in, and nothing else changed.
		if err := f.svc.Remove(ctx, ada.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.Remove(ctx, ada.ID, p.ID); !errors.Is(err, passkey.ErrNotFound) {
			t.Errorf("second remove: %v", err)
		}
		if _, err := f.login(phone); !errors.Is(err, passkey.ErrUnknownPasskey) {
			t.Errorf("sign-in with a removed passkey: %v", err)
		}
		if len(f.passkeys(ada.ID)) != 0 {
			t.Error("passkeys left")
		}
	})
}

// Failed ceremonies change nothing: a malformed answer (the ceremony
// stays usable), another origin, an expired ceremony, a ceremony of
// another purpose.
func TestFailedCeremoniesChangeNothing(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t), identity.ThrottlePolicy{})
	ctx := context.Background()
	ada := f.account("ada@example.com")
	auth := &softkey.Authenticator{}

	c, err := f.svc.BeginRegistration(ctx, ada)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "{", `{"id":"x"}`, "null", `{"type":"public-key","response":{}}`, strings.Repeat(" ", passkey.MaxResponseBytes+1)} {
		if _, err := f.svc.FinishRegistration(ctx, ada, c.Handle, "x", []byte(bad)); !errors.Is(err, passkey.ErrMalformed) {
			t.Errorf("answer %.20q: %v", bad, err)
		}
	}
	evil, _, err := auth.Create(c.Options, "https://evil.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishRegistration(ctx, ada, c.Handle, "x", evil); !errors.Is(err, passkey.ErrNotVerified) {
		t.Errorf("other origin: %v", err)
	}
	c, _ = f.svc.BeginRegistration(ctx, ada)
	resp, _, _ := auth.Create(c.Options, issuer)
	f.clock.Add(passkey.CeremonyLifetime)
	if _, err := f.svc.FinishRegistration(ctx, ada, c.Handle, "x", resp); !errors.Is(err, passkey.ErrCeremony) {
		t.Errorf("expired: %v", err)
	}
	lc, _ := f.svc.BeginLogin(ctx)
	c, _ = f.svc.BeginRegistration(ctx, ada)
	resp, _, _ = auth.Create(c.Options, issuer)
	if _, err := f.svc.FinishRegistration(ctx, ada, lc.Handle, "x", resp); !errors.Is(err, passkey.ErrCeremony) {
		t.Errorf("a sign-in ceremony finished a registration: %v", err)
	}
	if _, err := f.svc.FinishRegistration(ctx, ada, "", "x", resp); !errors.Is(err, passkey.ErrCeremony) {
		t.Errorf("no handle: %v", err)
	}
	if ps := f.passkeys(ada.ID); len(ps) != 0 {
		t.Fatalf("failed ceremonies stored %d passkeys", len(ps))
	}
	if len(f.mail.mails) != 0 {
		t.Errorf("mails for failed ceremonies: %+v", f.mail.mails)
	}
}

// A disabled account cannot sign in with a passkey; an unverified one can,
// as with a password.
func TestPasskeySignInAccountRules(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t), identity.ThrottlePolicy{})
	ctx := context.Background()
	ada := f.account("ada@example.com")
	auth := &softkey.Authenticator{}
	f.register(auth, ada, "phone")
	if a, err := f.login(auth); err != nil || a.EmailVerifiedAt != nil {
		t.Fatalf("unverified sign-in: %v %+v", err, a)
	}
	if _, err := f.st.UpdateAccount(ctx, ada.ID, func(a store.Account) (store.Account, error) { a.Disabled = true; return a, nil }); err != nil {
		t.Fatal(err)
	}
	before := f.passkeys(ada.ID)[0].LastUsedAt
	f.clock.Add(time.Minute)
	if _, err := f.login(auth); !errors.Is(err, identity.ErrAccountDisabled) {
		t.Errorf("disabled: %v", err)
	}
	if after := f.passkeys(ada.ID)[0].LastUsedAt; !after.Equal(*before) {
		t.Errorf("a refused sign-in recorded a use: %v -> %v", before, after)
	}
}

// A signature counter that goes backwards is refused and the stored
// counter kept, so the genuine authenticator keeps working.
func TestSignCounterCloneWarning(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t), identity.ThrottlePolicy{})
	ada := f.account("ada@example.com")
	auth := &softkey.Authenticator{Counting: true}
	_, k := f.register(auth, ada, "key")
	for i := 0; i < 3; i++ {
		if _, err := f.login(auth); err != nil {
			t.Fatalf("sign-in %d: %v", i, err)
		}
	}
	storedCount := func() uint32 {
		t.Helper()
		var stored struct {
			Authenticator struct{ SignCount uint32 } `json:"authenticator"`
		}
		if err := json.Unmarshal(f.passkeys(ada.ID)[0].Credential, &stored); err != nil {
			t.Fatal(err)
		}
		return stored.Authenticator.SignCount
	}
	if n := storedCount(); n != 3 {
		t.Fatalf("stored counter %d, want 3", n)
	}
	k.Counter = 1 // a copy that lags behind
	if _, err := f.login(auth); !errors.Is(err, passkey.ErrPossibleClone) {
		t.Errorf("counter went back: %v", err)
	}
	if n := storedCount(); n != 3 {
		t.Errorf("stored counter changed to %d", n)
	}
	k.Counter = 10
	if _, err := f.login(auth); err != nil {
		t.Errorf("the genuine key after a clone warning: %v", err)
	}
}

// Passkeys that fail to verify count against the address like wrong
// passwords; once throttled, even a good passkey waits.
func TestPasskeySignInThrottled(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t), identity.ThrottlePolicy{AddressLimit: 3, Window: time.Hour, BaseDelay: time.Minute})
	ctx := context.Background()
	ada := f.account("ada@example.com")
	auth := &softkey.Authenticator{}
	f.register(auth, ada, "phone")
	for i := 0; i < 3; i++ {
		c, _ := f.svc.BeginLogin(ctx)
		resp, _, _ := auth.Get(c.Options, "https://evil.example")
		if _, err := f.svc.FinishLogin(ctx, c.Handle, resp, "192.0.2.1"); !errors.Is(err, passkey.ErrNotVerified) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if _, err := f.login(auth); !errors.Is(err, identity.ErrThrottled) {
		t.Fatalf("throttled sign-in: %v", err)
	}
	// Another address is not held back.
	c, _ := f.svc.BeginLogin(ctx)
	resp, _, _ := auth.Get(c.Options, issuer)
	if _, err := f.svc.FinishLogin(ctx, c.Handle, resp, "198.51.100.7"); err != nil {
		t.Errorf("other address: %v", err)
	}
	f.clock.Add(2 * time.Minute)
	if _, err := f.login(auth); err != nil {
		t.Errorf("after the wait: %v", err)
	}
}

// With e-mail off a passkey is still added, without its notice.
func TestPasskeyAddedWithMailOff(t *testing.T) {
	f := newFixture(t, sqltest.SQLite(t), identity.ThrottlePolicy{})
	f.mail.off = true
	ada := f.account("ada@example.com")
	f.register(&softkey.Authenticator{}, ada, "phone")
	if ps := f.passkeys(ada.ID); len(ps) != 1 {
		t.Fatalf("passkeys %d", len(ps))
	}
}

// TestCleanName: a passkey's name passes the text rule (docs/reference.md
// §4): bidi controls and C1 characters are refused, and the name is stored
// in NFC.
func TestCleanName(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	for _, bad := range []string{"Phone\u202e", "Key\u2066x", "a\u0085b", "a\x1bb", "line\u2028two", strings.Repeat("k", passkey.MaxNameLength+1)} {
		if _, err := passkey.CleanName(bad, now); !errors.Is(err, passkey.ErrInvalidName) {
			t.Errorf("CleanName(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if got, err := passkey.CleanName(" Te\u0301le\u0301phone ", now); err != nil || got != "T\u00e9l\u00e9phone" {
		t.Errorf("CleanName = %q, %v; want the trimmed NFC form", got, err)
	}
}
