package fositestore_test

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const resource = "http://127.0.0.1:8081/mcp"

type fixture struct {
	s    *sqlstore.Store
	fs   *fositestore.Store
	link store.Link
	now  time.Time
}

func setup(t *testing.T, s *sqlstore.Store) *fixture {
	t.Helper()
	ctx := context.Background()
	now := store.SystemClock()
	acct := store.Account{ID: store.NewID("acc"), Email: store.RandomString(4) + "@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"app", "other"} {
		c := store.Client{ID: id, Name: id, Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
			AllowedScopes: []string{"openid", "bookings:read"}, DefaultScopes: []string{"bookings:read"},
			GrantTypes: []string{"authorization_code", "refresh_token"}, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateClient(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	link, err := s.UpsertLink(ctx, acct.ID, "app", []string{"openid", "bookings:read"}, now)
	if err != nil {
		t.Fatal(err)
	}
	fs := fositestore.New(s, fositestore.Options{Audience: []string{resource}, RefreshAbsolute: 90 * 24 * time.Hour,
		Clock: func() time.Time { return store.SystemClock() }})
	return &fixture{s: s, fs: fs, link: link, now: now}
}

func (f *fixture) request(t *testing.T) *fosite.Request {
	t.Helper()
	c, err := f.fs.GetClient(context.Background(), "app")
	if err != nil {
		t.Fatal(err)
	}
	sess := &fositestore.Session{Subject: f.link.AccountID, LinkID: f.link.ID, ClientID: "app",
		AuthTime: f.now.Truncate(time.Second), GrantedAt: f.now,
		IDClaims:  &jwt.IDTokenClaims{Subject: f.link.AccountID, Nonce: "n1", Extra: map[string]any{"k": "v"}},
		IDHeaders: &jwt.Headers{Extra: map[string]any{"kid": "k1"}},
		Extra:     map[string]any{"note": "x"}}
	for _, k := range []fosite.TokenType{fosite.AuthorizeCode, fosite.AccessToken, fosite.RefreshToken} {
		sess.SetExpiresAt(k, f.now.Add(time.Hour).Truncate(time.Second))
	}
	return &fosite.Request{ID: store.NewID("req"), RequestedAt: f.now.Truncate(time.Second), Client: c,
		RequestedScope: fosite.Arguments{"openid"}, GrantedScope: fosite.Arguments{"openid", "bookings:read"},
		RequestedAudience: fosite.Arguments{resource}, GrantedAudience: fosite.Arguments{resource},
		Form: url.Values{"redirect_uri": {"http://127.0.0.1/cb"}, "code_challenge": {"abc"}}, Session: sess}
}

func TestRoundTrip(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		in := f.request(t)
		kinds := []struct {
			name   string
			create func(string, fosite.Requester) error
			get    func(string, fosite.Session) (fosite.Requester, error)
		}{
			{"code", func(sig string, r fosite.Requester) error { return f.fs.CreateAuthorizeCodeSession(ctx, sig, r) }, func(sig string, s fosite.Session) (fosite.Requester, error) {
				return f.fs.GetAuthorizeCodeSession(ctx, sig, s)
			}},
			{"access", func(sig string, r fosite.Requester) error { return f.fs.CreateAccessTokenSession(ctx, sig, r) },
				func(sig string, s fosite.Session) (fosite.Requester, error) {
					return f.fs.GetAccessTokenSession(ctx, sig, s)
				}},
			{"refresh", func(sig string, r fosite.Requester) error { return f.fs.CreateRefreshTokenSession(ctx, sig, "", r) },
				func(sig string, s fosite.Session) (fosite.Requester, error) {
					return f.fs.GetRefreshTokenSession(ctx, sig, s)
				}},
			{"pkce", func(sig string, r fosite.Requester) error { return f.fs.CreatePKCERequestSession(ctx, sig, r) },
				func(sig string, s fosite.Session) (fosite.Requester, error) {
					return f.fs.GetPKCERequestSession(ctx, sig, s)
				}},
		}
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) {
				sig := store.RandomString(16)
				if k.name == "code" {
					if err := f.fs.CreateAuthorizeCodeSession(ctx, sig, in); err != nil {
						t.Fatal(err)
					}
				} else if err := k.create(sig, in); err != nil {
					t.Fatal(err)
				}
				// The signature is stored only hashed.
				if _, err := s.GetTokenSession(ctx, kindOf(k.name), sig); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("raw signature found: %v", err)
				}
				sess := fositestore.NewSession()
				out, err := k.get(sig, sess)
				if err != nil {
					t.Fatal(err)
				}
				compare(t, in, out)
				if !reflect.DeepEqual(sess, in.Session) {
					t.Errorf("hydrated session\n got %#v\nwant %#v", sess, in.Session)
				}
			})
		}
		t.Run("openid", func(t *testing.T) {
			sig := store.RandomString(16)
			if err := f.fs.CreateOpenIDConnectSession(ctx, sig, in); err != nil {
				t.Fatal(err)
			}
			out, err := f.fs.GetOpenIDConnectSession(ctx, sig, &fosite.Request{Session: fositestore.NewSession()})
			if err != nil {
				t.Fatal(err)
			}
			compare(t, in, out)
			if err := f.fs.DeleteOpenIDConnectSession(ctx, sig); err != nil {
				t.Fatal(err)
			}
			if _, err := f.fs.GetOpenIDConnectSession(ctx, sig, &fosite.Request{Session: fositestore.NewSession()}); !errors.Is(err, fosite.ErrNotFound) {
				t.Fatalf("after delete: %v", err)
			}
		})
	})
}

func kindOf(name string) store.TokenKind {
	return map[string]store.TokenKind{"code": store.KindAuthorizeCode, "access": store.KindAccessToken,
		"refresh": store.KindRefreshToken, "pkce": store.KindPKCE}[name]
}

func compare(t *testing.T, in *fosite.Request, outR fosite.Requester) {
	t.Helper()
	out := outR.(*fosite.Request)
	if out.ID != in.ID || !out.RequestedAt.Equal(in.RequestedAt) || out.Client.GetID() != in.Client.GetID() {
		t.Errorf("id/time/client: %v %v %v", out.ID, out.RequestedAt, out.Client.GetID())
	}
	for name, pair := range map[string][2]fosite.Arguments{
		"requested scope": {in.RequestedScope, out.RequestedScope}, "granted scope": {in.GrantedScope, out.GrantedScope},
		"requested audience": {in.RequestedAudience, out.RequestedAudience}, "granted audience": {in.GrantedAudience, out.GrantedAudience},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: got %v want %v", name, pair[1], pair[0])
		}
	}
	if !reflect.DeepEqual(in.Form, out.Form) {
		t.Errorf("form: got %v", out.Form)
	}
	if !reflect.DeepEqual(in.Session, out.Session) {
		t.Errorf("session\n got %#v\nwant %#v", out.Session, in.Session)
	}
}

func TestCodeSingleUse(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		for round := 0; round < 5; round++ {
			sig := store.RandomString(16)
			if err := f.fs.CreateAuthorizeCodeSession(ctx, sig, f.request(t)); err != nil {
				t.Fatal(err)
			}
			wins := race(8, func() error { return f.fs.InvalidateAuthorizeCodeSession(ctx, sig) }, fosite.ErrInvalidatedAuthorizeCode, t)
			if wins != 1 {
				t.Fatalf("round %d: %d redemptions succeeded, want 1", round, wins)
			}
			req, err := f.fs.GetAuthorizeCodeSession(ctx, sig, fositestore.NewSession())
			if !errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) || req == nil {
				t.Fatalf("used code: got %v, %v; want the request and ErrInvalidatedAuthorizeCode", req, err)
			}
		}
	})
}

func TestRefreshSingleUse(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		for round := 0; round < 5; round++ {
			sig := store.RandomString(16)
			r := f.request(t)
			if err := f.fs.CreateRefreshTokenSession(ctx, sig, "", r); err != nil {
				t.Fatal(err)
			}
			wins := race(8, func() error { return f.fs.RotateRefreshToken(ctx, r.ID, sig) }, fosite.ErrInactiveToken, t)
			if wins != 1 {
				t.Fatalf("round %d: %d rotations succeeded, want 1", round, wins)
			}
			req, err := f.fs.GetRefreshTokenSession(ctx, sig, fositestore.NewSession())
			if !errors.Is(err, fosite.ErrInactiveToken) || req == nil {
				t.Fatalf("used token: got %v, %v", req, err)
			}
		}
		t.Run("revoked link refuses refresh", func(t *testing.T) {
			sig := store.RandomString(16)
			if err := f.fs.CreateRefreshTokenSession(ctx, sig, "", f.request(t)); err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeLink(ctx, f.link.ID, store.SystemClock()); err != nil {
				t.Fatal(err)
			}
			if _, err := f.fs.GetRefreshTokenSession(ctx, sig, fositestore.NewSession()); err == nil {
				t.Fatal("refresh token of a revoked link accepted")
			}
		})
		t.Run("disabled client refuses", func(t *testing.T) {
			if _, err := s.UpdateClient(ctx, "other", func(c store.Client) (store.Client, error) { c.Disabled = true; return c, nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := f.fs.GetClient(ctx, "other"); !errors.Is(err, fosite.ErrNotFound) {
				t.Fatalf("disabled client: %v", err)
			}
		})
	})
}

func TestAbsoluteLifetime(t *testing.T) {
	s := sqltest.SQLite(t)
	f := setup(t, s)
	ctx := context.Background()
	r := f.request(t)
	sess := r.Session.(*fositestore.Session)
	sess.GrantedAt = f.now.Add(-90*24*time.Hour + time.Minute)
	sess.SetExpiresAt(fosite.RefreshToken, f.now.Add(30*24*time.Hour))
	sig := store.RandomString(16)
	if err := f.fs.CreateRefreshTokenSession(ctx, sig, "", r); err != nil {
		t.Fatal(err)
	}
	got, err := f.fs.GetRefreshTokenSession(ctx, sig, fositestore.NewSession())
	if err != nil {
		t.Fatal(err)
	}
	exp := got.GetSession().GetExpiresAt(fosite.RefreshToken)
	if want := sess.GrantedAt.Add(90 * 24 * time.Hour); !exp.Equal(want) {
		t.Fatalf("refresh expiry %v, want capped at %v", exp, want)
	}
}

// race runs fn n times at once and counts successes; any error other than
// loser is a failure.
func race(n int, fn func() error, loser error, t *testing.T) int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	wins := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := fn()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, loser):
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	return wins
}
