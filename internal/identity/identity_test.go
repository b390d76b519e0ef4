package identity_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// cheapHasher keeps throttling tests fast; one test below uses the real
// argon2id hasher end to end.
type cheapHasher struct{}

func (cheapHasher) Hash(_ context.Context, pw string) (string, error) {
	return "h:" + store.HashSecret(pw), nil
}
func (cheapHasher) Check(_ context.Context, h, pw string) (bool, string, error) {
	return h == "h:"+store.HashSecret(pw), "", nil
}

func newService(t *testing.T, s *sqlstore.Store, clk *fakeClock, h identity.Hasher) *identity.Service {
	t.Helper()
	svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: h})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func start() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

const pw = "correct horse battery"

func TestSignUp(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s, start(), nil) // real argon2id
		a, err := svc.SignUp(ctx, "  Ada@Example.COM ", pw)
		if err != nil {
			t.Fatal(err)
		}
		if a.Email != "ada@example.com" || !strings.HasPrefix(a.PasswordHash, "$argon2id$") {
			t.Fatalf("account = %+v", a)
		}
		if _, err := svc.Authenticate(ctx, "ADA@example.com", pw, "192.0.2.1"); err != nil {
			t.Fatalf("authenticate: %v", err)
		}
		if _, err := svc.SignUp(ctx, "ada@example.com", "another long password"); !errors.Is(err, identity.ErrEmailUnavailable) {
			t.Fatalf("duplicate: %v", err)
		}
		// The same address in another Unicode form is the same account
		// (docs/reference.md §4): NFC before uniqueness is decided.
		if _, err := svc.SignUp(ctx, "jose\u0301@example.com", pw); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SignUp(ctx, "jos\u00e9@EXAMPLE.com", "another long password"); !errors.Is(err, identity.ErrEmailUnavailable) {
			t.Fatalf("the composed form of an existing address: %v, want ErrEmailUnavailable", err)
		}
		if _, err := svc.Authenticate(ctx, "jos\u00e9@example.com", pw, "192.0.2.1"); err != nil {
			t.Fatalf("authenticate with the composed form: %v", err)
		}
		for _, tc := range []struct {
			name, email, pw string
			want            error
		}{
			{"empty email", "", pw, identity.ErrInvalidEmail},
			{"no at", "ada.example.com", pw, identity.ErrInvalidEmail},
			{"display name", "Ada <ada@example.com>", pw, identity.ErrInvalidEmail},
			{"no dot in domain", "ada@localhost", pw, identity.ErrInvalidEmail},
			{"zero-width space", "a\u200bda@example.com", pw, identity.ErrInvalidEmail},
			{"zero-width joiner", "ada@exa\u200dmple.com", pw, identity.ErrInvalidEmail},
			{"word joiner", "ada\u2060@example.com", pw, identity.ErrInvalidEmail},
			{"BOM", "\ufeffada@example.com", pw, identity.ErrInvalidEmail},
			{"soft hyphen", "a\u00adda@example.com", pw, identity.ErrInvalidEmail},
			{"right-to-left override", "ada\u202e@example.com", pw, identity.ErrInvalidEmail},
			{"IPv4 literal", "ada@[192.0.2.1]", pw, identity.ErrInvalidEmail},
			{"bare IPv4", "ada@192.0.2.1", pw, identity.ErrInvalidEmail},
			{"IPv6 literal", "ada@[IPv6:2001:db8::1]", pw, identity.ErrInvalidEmail},
			{"short password", "bob@example.com", "123456789", identity.ErrWeakPassword},
			{"password is email", "bob@example.com", "BOB@example.com", identity.ErrWeakPassword},
			{"spaces", "bob@example.com", "            ", identity.ErrWeakPassword},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := svc.SignUp(ctx, tc.email, tc.pw); !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
	})
}

func TestAuthenticateErrorsAreIndistinguishable(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	svc := newService(t, s, start(), cheapHasher{})
	if _, err := svc.SignUp(ctx, "ada@example.com", pw); err != nil {
		t.Fatal(err)
	}
	_, e1 := svc.Authenticate(ctx, "ada@example.com", "wrong password!", "a")
	_, e2 := svc.Authenticate(ctx, "nobody@example.com", pw, "b")
	if !errors.Is(e1, identity.ErrInvalidCredentials) || !errors.Is(e2, identity.ErrInvalidCredentials) || e1.Error() != e2.Error() {
		t.Fatalf("wrong password: %v; unknown email: %v", e1, e2)
	}
	if strings.Contains(e1.Error(), "wrong password!") {
		t.Fatal("error repeats the password")
	}
}

func TestThrottlePerAccount(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	clk := start()
	svc := newService(t, s, clk, cheapHasher{})
	if _, err := svc.SignUp(ctx, "ada@example.com", pw); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "x"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	// Limit reached for the account at this address: even the right
	// password waits there, and only there.
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "elsewhere"); err != nil {
		t.Fatalf("another address after 5 failures from one: %v", err)
	}
	_, err := svc.Authenticate(ctx, "ada@example.com", pw, "x")
	wait, throttled := identity.RetryAfter(err)
	if !throttled || !errors.Is(err, identity.ErrThrottled) || wait != time.Minute {
		t.Fatalf("after 5 failures: %v", err)
	}
	if !strings.Contains(err.Error(), "1 minute") {
		t.Fatalf("message does not say when: %q", err)
	}
	clk.Advance(time.Minute)
	// Another failure after the wait doubles the delay.
	if _, err := svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "x"); !errors.Is(err, identity.ErrInvalidCredentials) {
		t.Fatalf("after wait: %v", err)
	}
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "x"); !throttledFor(err, 2*time.Minute) {
		t.Fatalf("second wait: %v", err)
	}
	// The owner gets in after the wait; success clears the count.
	clk.Advance(2 * time.Minute)
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "x"); err != nil {
		t.Fatalf("correct password after wait: %v", err)
	}
	if _, err := svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "x"); !errors.Is(err, identity.ErrInvalidCredentials) {
		t.Fatalf("count not cleared: %v", err)
	}
	// Unknown addresses are throttled like known ones (no existence leak).
	for range 5 {
		svc.Authenticate(ctx, "ghost@example.com", "nope nope nope", "y")
	}
	if _, err := svc.Authenticate(ctx, "ghost@example.com", "nope nope nope", "y"); !errors.Is(err, identity.ErrThrottled) {
		t.Fatalf("unknown address not throttled: %v", err)
	}
}

func TestThrottleWindowSlides(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	clk := start()
	svc := newService(t, s, clk, cheapHasher{})
	svc.SignUp(ctx, "ada@example.com", pw)
	for range 4 {
		svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "a")
		clk.Advance(5 * time.Minute)
	}
	// Failures at 0, 5, 10, 15 min; now t=20: the first two slid out.
	svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "a")
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "a"); err != nil {
		t.Fatalf("window did not slide: %v", err)
	}
}

func TestThrottlePerAddress(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	clk := start()
	svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{},
		Throttle: identity.ThrottlePolicy{AddressLimit: 8}})
	if err != nil {
		t.Fatal(err)
	}
	svc.SignUp(ctx, "ada@example.com", pw)
	for i := range 8 {
		svc.Authenticate(ctx, "guess"+string(rune('a'+i))+"@example.com", "nope nope nope", "203.0.113.9")
	}
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "203.0.113.9"); !errors.Is(err, identity.ErrThrottled) {
		t.Fatalf("address not throttled: %v", err)
	}
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.1"); err != nil {
		t.Fatalf("another address was throttled: %v", err)
	}
}

func TestSessions(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		svc := newService(t, s, clk, cheapHasher{})
		a, _ := svc.SignUp(ctx, "ada@example.com", pw)
		s1, err := svc.CreateSession(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(s1.Token) != 43 || !s1.ExpiresAt.Equal(clk.Now().Add(12*time.Hour)) {
			t.Fatalf("session = %+v", s1)
		}
		if _, err := s.GetWebSession(ctx, s1.Token); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("the raw token is stored")
		}
		signedIn := clk.Now()
		clk.Advance(time.Hour)
		got, gs, err := svc.LookupSession(ctx, s1.Token)
		if err != nil || got.ID != a.ID {
			t.Fatalf("lookup: %v %v", got, err)
		}
		// auth_time: the sign-in, on both dialects, not the lookup.
		if !s1.AuthTime.Equal(signedIn) || !gs.AuthTime.Equal(signedIn) {
			t.Fatalf("auth time %v at creation, %v at lookup, want the sign-in %v", s1.AuthTime, gs.AuthTime, signedIn)
		}
		if _, _, err := svc.LookupSession(ctx, s1.Token+"x"); !errors.Is(err, identity.ErrNoSession) {
			t.Fatalf("tampered: %v", err)
		}
		s2, _ := svc.CreateSession(ctx, a.ID)
		s3, _ := svc.CreateSession(ctx, a.ID)
		// Changing the password from s2 ends s1 and s3.
		if err := svc.ChangePassword(ctx, a.ID, "wrong wrong wrong", "a new long password", s2.Token, "x"); !errors.Is(err, identity.ErrWrongPassword) {
			t.Fatalf("wrong current: %v", err)
		}
		if err := svc.ChangePassword(ctx, a.ID, pw, "short", s2.Token, "x"); !errors.Is(err, identity.ErrWeakPassword) {
			t.Fatalf("weak: %v", err)
		}
		if err := svc.ChangePassword(ctx, a.ID, pw, "a new long password", s2.Token, "x"); err != nil {
			t.Fatal(err)
		}
		for tok, live := range map[string]bool{s1.Token: false, s2.Token: true, s3.Token: false} {
			if _, _, err := svc.LookupSession(ctx, tok); (err == nil) != live {
				t.Fatalf("session live=%v: %v", live, err)
			}
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", "a new long password", "x"); err != nil {
			t.Fatal(err)
		}
		// Expiry.
		clk.Advance(12 * time.Hour)
		if _, _, err := svc.LookupSession(ctx, s2.Token); !errors.Is(err, identity.ErrNoSession) {
			t.Fatalf("expired session: %v", err)
		}
		s4, _ := svc.CreateSession(ctx, a.ID)
		if err := svc.DeleteSession(ctx, s4.Token); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.LookupSession(ctx, s4.Token); !errors.Is(err, identity.ErrNoSession) {
			t.Fatalf("deleted session: %v", err)
		}
	})
}

func TestLinksAndActivity(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		svc := newService(t, s, clk, cheapHasher{})
		ada, _ := svc.SignUp(ctx, "ada@example.com", pw)
		bob, _ := svc.SignUp(ctx, "bob@example.com", pw)
		if err := s.CreateClient(ctx, store.Client{ID: "agent", Name: "Agent", Public: true,
			RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		la, _ := s.UpsertLink(ctx, ada.ID, "agent", []string{"bookings:read"}, clk.Now())
		lb, _ := s.UpsertLink(ctx, bob.ID, "agent", []string{"bookings:read"}, clk.Now())
		if err := s.CreateTokenSession(ctx, store.TokenSession{Kind: store.KindRefreshToken, SignatureHash: "sig", RequestID: "r",
			ClientID: "agent", AccountID: ada.ID, LinkID: la.ID, Active: true, Request: []byte("{}"),
			ExpiresAt: clk.Now().Add(time.Hour), CreatedAt: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		conns, err := svc.Connections(ctx, ada.ID)
		if err != nil || len(conns) != 1 || conns[0].ID != la.ID {
			t.Fatalf("connections: %v %v", conns, err)
		}
		for name, id := range map[string]string{"another person's link": lb.ID, "unknown link": "lnk_nope"} {
			if err := svc.Disconnect(ctx, ada.ID, id); !errors.Is(err, identity.ErrNotFound) {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if l, _ := s.GetLink(ctx, lb.ID); l.Status != store.LinkActive {
			t.Fatal("bob's link was revoked")
		}
		if err := svc.Disconnect(ctx, ada.ID, la.ID); err != nil {
			t.Fatal(err)
		}
		if err := svc.Disconnect(ctx, ada.ID, la.ID); !errors.Is(err, identity.ErrNotFound) {
			t.Fatalf("second disconnect: %v", err)
		}
		if ts, _ := s.GetTokenSession(ctx, store.KindRefreshToken, "sig"); ts.Active {
			t.Fatal("token session still active")
		}
		if conns, _ := svc.Connections(ctx, ada.ID); len(conns) != 0 {
			t.Fatalf("revoked link listed: %v", conns)
		}

		for i := range 5 {
			clk.Advance(time.Minute)
			if err := s.AddActivity(ctx, store.Activity{ID: store.NewID("act"), AccountID: ada.ID, LinkID: la.ID, ClientID: "agent",
				Tool: "create_my_booking", Arguments: []byte("{}"), Summary: "Summary " + string(rune('A'+i)), ConfirmationText: "yes",
				IdempotencyKey: "k" + string(rune('a'+i)) + "-0123456789abcdef", Outcome: []byte("{}"), CreatedAt: clk.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		p1, err := svc.Activity(ctx, ada.ID, 1, 2)
		if err != nil || len(p1.Entries) != 2 || !p1.HasMore || p1.Entries[0].Summary != "Summary E" {
			t.Fatalf("page 1: %+v %v", p1, err)
		}
		p3, _ := svc.Activity(ctx, ada.ID, 3, 2)
		if len(p3.Entries) != 1 || p3.HasMore || p3.Entries[0].Summary != "Summary A" {
			t.Fatalf("page 3: %+v", p3)
		}
		if pb, _ := svc.Activity(ctx, bob.ID, 1, 10); len(pb.Entries) != 0 {
			t.Fatal("bob sees ada's activity")
		}
	})
}
