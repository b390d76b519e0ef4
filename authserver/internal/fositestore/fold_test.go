package fositestore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/openid"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCompanionsKeptInCode: stored in one transaction, as the authorize
// endpoint stores them, a code's PKCE and OpenID sessions are kept in the
// code's row (fold.go); stored one by one they are rows of their own, as
// codes stored before folding have. Through the calls fosite makes, both
// read back the same requests, redeem alike, and are used up alike by a
// failed redemption.
func TestCompanionsKeptInCode(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		f.fs.UseCodeSignature(func(_ context.Context, code string) string { return strings.TrimPrefix(code, "code-") })
		bg := context.Background()
		// request is the context provider.Provider gives fosite for a
		// token request.
		request := func() context.Context {
			return f.fs.Begin(bg)
		}
		rows := func(t *testing.T, requestID string) (n int64) {
			t.Helper()
			if err := s.DB().Raw("SELECT count(*) FROM token_sessions WHERE request_id = ?", requestID).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		type issued struct {
			code, sig       string
			own, pkce, oidc fosite.Requester // as stored
			in              *fosite.Request
		}
		// authorize stores a code and its companions, the OpenID session's
		// form empty without a nonce.
		authorize := func(t *testing.T, inTx, nonce bool) issued {
			t.Helper()
			in := f.request(t)
			in.Form = url.Values{"redirect_uri": {"http://127.0.0.1/cb"}, "code_challenge": {"abc"},
				"code_challenge_method": {"S256"}, "state": {"s"}}
			if nonce {
				in.Form.Set("nonce", "n-"+store.RandomString(4))
			}
			sig := store.RandomString(16)
			is := issued{code: "code-" + sig, sig: sig, in: in, own: in.Sanitize(nil),
				pkce: in.Sanitize([]string{"code_challenge", "code_challenge_method"}), oidc: in.Sanitize([]string{"nonce"})}
			ctx := bg
			if inTx {
				var err error
				if ctx, err = f.fs.BeginTX(bg); err != nil {
					t.Fatal(err)
				}
			}
			for _, err := range []error{
				f.fs.CreateAuthorizeCodeSession(ctx, sig, is.own),
				f.fs.CreatePKCERequestSession(ctx, sig, is.pkce),
				f.fs.CreateOpenIDConnectSession(ctx, is.code, is.oidc),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			if inTx {
				if err := f.fs.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			return is
		}
		for _, mode := range []struct {
			name string
			inTx bool
			rows int64
		}{{"kept in the code's row", true, 1}, {"rows of their own", false, 3}} {
			t.Run(mode.name, func(t *testing.T) {
				is := authorize(t, mode.inTx, true)
				if n := rows(t, is.in.ID); n != mode.rows {
					t.Fatalf("an authorization stored %d rows, want %d", n, mode.rows)
				}
				// Read as fosite reads them, with and without the
				// token endpoint's prefetch, and without a nonce.
				bare := authorize(t, mode.inTx, false)
				for _, read := range []struct {
					is       issued
					prefetch bool
				}{{is, false}, {is, true}, {bare, false}, {bare, true}} {
					is, prefetch := read.is, read.prefetch
					ctx := bg
					if prefetch {
						ctx = request()
						f.fs.Prefetch(ctx, "app", store.KindAuthorizeCode, is.code, is.sig)
					}
					code, err := f.fs.GetAuthorizeCodeSession(ctx, is.sig, fositestore.NewSession())
					if err != nil {
						t.Fatal(err)
					}
					compare(t, is.own.(*fosite.Request), code)
					p, err := f.fs.GetPKCERequestSession(ctx, is.sig, fositestore.NewSession())
					if err != nil {
						t.Fatal(err)
					}
					compare(t, is.pkce.(*fosite.Request), p)
					o, err := f.fs.GetOpenIDConnectSession(ctx, is.code, &fosite.Request{Session: fositestore.NewSession()})
					if err != nil {
						t.Fatal(err)
					}
					compare(t, is.oidc.(*fosite.Request), o)
				}

				// A redemption, as the token endpoint runs it.
				ctx := request()
				f.fs.Prefetch(ctx, "app", store.KindAuthorizeCode, is.code, is.sig)
				f.fs.BeginDeferral(ctx)
				if _, err := f.fs.GetAuthorizeCodeSession(ctx, is.sig, fositestore.NewSession()); err != nil {
					t.Fatal(err)
				}
				if _, err := f.fs.GetPKCERequestSession(ctx, is.sig, fositestore.NewSession()); err != nil {
					t.Fatal(err)
				}
				if err := f.fs.DeletePKCERequestSession(ctx, is.sig); err != nil {
					t.Fatal(err)
				}
				tx, err := f.fs.BeginTX(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.fs.InvalidateAuthorizeCodeSession(tx, is.sig); err != nil {
					t.Fatal(err)
				}
				if err := f.fs.Commit(tx); err != nil {
					t.Fatal(err)
				}
				o, err := f.fs.GetOpenIDConnectSession(ctx, is.code, &fosite.Request{Session: fositestore.NewSession()})
				if err != nil {
					t.Fatalf("OpenID session after the redemption, in its request: %v", err)
				}
				compare(t, is.oidc.(*fosite.Request), o)
				if err := f.fs.DeleteOpenIDConnectSession(ctx, is.code); err != nil {
					t.Fatal(err)
				}
				if err := f.fs.EndDeferral(ctx, false); err != nil {
					t.Fatal(err)
				}
				if n := rows(t, is.in.ID); n != 1 {
					t.Fatalf("%d rows after the redemption, want the used code alone", n)
				}
				// After it, in another request: the code is used, its
				// companions are gone.
				later := request()
				f.fs.Prefetch(later, "app", store.KindAuthorizeCode, is.code, is.sig)
				if _, err := f.fs.GetAuthorizeCodeSession(later, is.sig, fositestore.NewSession()); !errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
					t.Fatalf("used code: %v", err)
				}
				if _, err := f.fs.GetPKCERequestSession(later, is.sig, fositestore.NewSession()); !errors.Is(err, fosite.ErrNotFound) {
					t.Fatalf("PKCE session of a used code: %v", err)
				}
				if _, err := f.fs.GetOpenIDConnectSession(later, is.code, &fosite.Request{Session: fositestore.NewSession()}); !errors.Is(err, openid.ErrNoSessionFound) {
					t.Fatalf("OpenID session of a used code: %v", err)
				}

				// fosite's deletions outside the token endpoint's read
				// cache answer no error for either kind of code.
				is = authorize(t, mode.inTx, true)
				if err := f.fs.DeletePKCERequestSession(bg, is.sig); err != nil {
					t.Fatalf("PKCE session deleted without the read cache: %v", err)
				}
				if err := f.fs.DeleteOpenIDConnectSession(bg, is.code); err != nil {
					t.Fatalf("OpenID session deleted without the read cache: %v", err)
				}

				// A failed redemption (a wrong verifier) uses up the PKCE
				// session: the right verifier after it finds none.
				is = authorize(t, mode.inTx, true)
				ctx = request()
				f.fs.Prefetch(ctx, "app", store.KindAuthorizeCode, is.code, is.sig)
				f.fs.BeginDeferral(ctx)
				if _, err := f.fs.GetPKCERequestSession(ctx, is.sig, fositestore.NewSession()); err != nil {
					t.Fatal(err)
				}
				if err := f.fs.DeletePKCERequestSession(ctx, is.sig); err != nil {
					t.Fatal(err)
				}
				if err := f.fs.EndDeferral(ctx, true); err != nil {
					t.Fatal(err)
				}
				retry := request()
				f.fs.Prefetch(retry, "app", store.KindAuthorizeCode, is.code, is.sig)
				if _, err := f.fs.GetPKCERequestSession(retry, is.sig, fositestore.NewSession()); !errors.Is(err, fosite.ErrNotFound) {
					t.Fatalf("PKCE session after a failed redemption: %v", err)
				}
			})
		}
	})
}
