package authhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// The refresh grace (docs/reference.md §14, docs/refresh-grace.md), through
// the token endpoint on both backends.

const graceWindow = 30 * time.Second

// graceEnv is a server with the refresh grace set, counting on m.
type graceEnv struct {
	*env
	m    *metrics.Metrics
	deps authhttp.Deps // as the server was built, for a replica
}

func newGraceEnv(t *testing.T, s store.Store, grace time.Duration) *graceEnv {
	t.Helper()
	m := metrics.New("authserver")
	var deps authhttp.Deps
	e := newEnvWith(t, s, func(d *authhttp.Deps) {
		d.Config.RefreshGrace = grace
		d.Metrics = m
		deps = *d
	})
	return &graceEnv{env: e, m: m, deps: deps}
}

// graceAnswers is linkslot_refresh_grace_total.
func (g *graceEnv) graceAnswers(t *testing.T) float64 {
	t.Helper()
	return admissionSeries(t, g.m, "linkslot_refresh_grace_total")
}

// replica starts a second authorization server on s (the same database
// as the first, on a pool of its own) and returns its base URL and its
// metrics.
func (g *graceEnv) replica(t *testing.T, s store.Store) (string, *metrics.Metrics) {
	t.Helper()
	d := g.deps
	d.Store, d.Metrics, d.Gate = s, metrics.New("authserver"), nil
	h, err := authhttp.New(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, d.Metrics
}

// family links the demo client for the account with openid and answers
// its first refresh token.
func (g *graceEnv) family(t *testing.T) string {
	t.Helper()
	c := g.oauth(publicID, "", "openid")
	v := oauth2.GenerateVerifier()
	st, m := exchange(g.env, publicID, g.code(c, g.account.ID, oauth2.S256ChallengeOption(v)), v, nil)
	if st != http.StatusOK {
		t.Fatalf("exchange %d %v", st, m)
	}
	return m["refresh_token"].(string)
}

// refreshAt rotates rt at the server at base with golang.org/x/oauth2's
// token source, as an agent host's client does.
func refreshAt(base, rt string) (*oauth2.Token, error) {
	c := &oauth2.Config{ClientID: publicID, Endpoint: oauth2.Endpoint{TokenURL: base + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	return c.TokenSource(context.Background(), &oauth2.Token{RefreshToken: rt}).Token()
}

// sessionOf is the stored refresh session of token.
func sessionOf(t *testing.T, s store.Store, token string) store.TokenSession {
	t.Helper()
	ts, err := s.GetTokenSession(context.Background(), store.KindRefreshToken, store.HashSecret(token[strings.LastIndexByte(token, '.')+1:]))
	if err != nil {
		t.Fatalf("refresh session: %v", err)
	}
	return ts
}

// refreshRows counts the refresh sessions of token's family, and the
// active ones.
func refreshRows(t *testing.T, s *sqlstore.Store, token string) (all, live int64) {
	t.Helper()
	req := sessionOf(t, s, token).RequestID
	err := s.DB().Raw(`SELECT count(*), coalesce(sum(CASE WHEN active THEN 1 ELSE 0 END), 0) FROM token_sessions
WHERE kind = ? AND request_id = ?`, string(store.KindRefreshToken), req).Row().Scan(&all, &live)
	if err != nil {
		t.Fatal(err)
	}
	return all, live
}

// concurrentRefreshes presents rt n times at once, spread over bases in
// turn, and answers how many succeeded, the distinct refresh tokens they
// answered, and the failures (an error, or an answer without an access or
// ID token).
func concurrentRefreshes(bases []string, rt string, n int) (ok int, successors map[string]int, failures []string) {
	var mu sync.Mutex
	successors = map[string]int{}
	var turn atomic.Int64
	simultaneously(n, func() int {
		tok, err := refreshAt(bases[int(turn.Add(1))%len(bases)], rt)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures = append(failures, err.Error())
			return 0
		}
		ok++
		successors[tok.RefreshToken]++
		if id, _ := tok.Extra("id_token").(string); id == "" || tok.AccessToken == "" {
			failures = append(failures, "an answer without an access or ID token")
		}
		return 200
	})
	return ok, successors, failures
}

// checkOneChain: after the refreshes, the family has one live refresh
// token, the successor, which rotates, and its successor rotates too.
func checkOneChain(t *testing.T, e *env, s *sqlstore.Store, successor string) {
	t.Helper()
	if all, live := refreshRows(t, s, successor); all != 2 || live != 1 || !sessionOf(t, s, successor).Active {
		t.Fatalf("family after the refreshes: %d refresh sessions, %d live; want the spent one and its successor, live", all, live)
	}
	next, err := refreshAt(e.issuer, successor)
	if err != nil || next.RefreshToken == successor {
		t.Fatalf("the successor does not rotate: %v", err)
	}
	verifyAccessToken(t, e, next.AccessToken)
	if _, err := refreshAt(e.issuer, next.RefreshToken); err != nil {
		t.Fatalf("a second rotation from the successor: %v", err)
	}
	if _, live := refreshRows(t, s, successor); live != 1 {
		t.Fatalf("after two rotations: %d live refresh sessions, want 1", live)
	}
}

// TestRefreshGraceConcurrent: 2, 8 and 32 concurrent refreshes with one
// refresh token all answer 200 with one successor, and leave one chain;
// every answer but the rotation's is counted as a grace answer.
func TestRefreshGraceConcurrent(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		g := newGraceEnv(t, s, graceWindow)
		want := 0.0
		for _, n := range []int{2, 8, 32} {
			rt := g.family(t)
			ok, successors, failures := concurrentRefreshes([]string{g.issuer}, rt, n)
			t.Logf("%s, one server: %d concurrent refreshes with one token: %d answered 200, %d distinct successors", s.Dialect(), n, ok, len(successors))
			if ok != n || len(successors) != 1 {
				t.Fatalf("%d concurrent refreshes: %d answered 200 with %d distinct refresh tokens; want %d, one; failures %q", n, ok, len(successors), n, failures)
			}
			for successor := range successors {
				checkOneChain(t, g.env, s, successor)
			}
			want += float64(n - 1)
		}
		if got := g.graceAnswers(t); got != want {
			t.Fatalf("linkslot_refresh_grace_total = %v, want %v", got, want)
		}
	})
}

// TestRefreshGraceAcrossServers: the same across two authorization servers
// on one database, each with a pool of its own, the refreshes sent to
// both in turn.
func TestRefreshGraceAcrossServers(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			url := sqltest.MustURL(t, backend)
			open := func() *sqlstore.Store {
				s, err := sqlstore.Open(context.Background(), url, sqlstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			s1 := open()
			if _, err := s1.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			g := newGraceEnv(t, s1, graceWindow)
			second, m2 := g.replica(t, open())
			want := 0.0
			for _, n := range []int{2, 8, 32} {
				rt := g.family(t)
				ok, successors, failures := concurrentRefreshes([]string{g.issuer, second}, rt, n)
				t.Logf("%s, two servers: %d concurrent refreshes with one token: %d answered 200, %d distinct successors", backend, n, ok, len(successors))
				if ok != n || len(successors) != 1 {
					t.Fatalf("%d concurrent refreshes over two servers: %d answered 200 with %d distinct refresh tokens; want %d, one; failures %q", n, ok, len(successors), n, failures)
				}
				for successor := range successors {
					checkOneChain(t, g.env, s1, successor)
				}
				want += float64(n - 1)
			}
			if got := g.graceAnswers(t) + admissionSeries(t, m2, "linkslot_refresh_grace_total"); got != want {
				t.Fatalf("linkslot_refresh_grace_total on both servers = %v, want %v", got, want)
			}
		})
	}
}

// TestRefreshGraceLostAnswer: a refresh whose answer is lost, retried with
// the old token 300 ms later, answers the same successor (with a new
// access token and ID token), and the chain goes on from it.
func TestRefreshGraceLostAnswer(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		g := newGraceEnv(t, s, graceWindow)
		rt := g.family(t)
		lost, err := refreshAt(g.issuer, rt)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		retry, err := refreshAt(g.issuer, rt)
		if err != nil {
			t.Fatalf("retry 300 ms after a lost answer: %v", err)
		}
		if retry.RefreshToken != lost.RefreshToken {
			t.Fatal("the retry answered another refresh token than the lost answer")
		}
		if retry.AccessToken == lost.AccessToken || retry.Extra("id_token") == nil || retry.Extra("scope") != lost.Extra("scope") {
			t.Fatalf("the retry's access token: new %v, ID token %v, scope %v (was %v)", retry.AccessToken != lost.AccessToken,
				retry.Extra("id_token") != nil, retry.Extra("scope"), lost.Extra("scope"))
		}
		claims := verifyAccessToken(t, g.env, retry.AccessToken)
		if claims["scope"] != verifyAccessToken(t, g.env, lost.AccessToken)["scope"] {
			t.Fatalf("the retry's access token has scope %v", claims["scope"])
		}
		if n := g.graceAnswers(t); n != 1 {
			t.Fatalf("linkslot_refresh_grace_total = %v, want 1", n)
		}
		checkOneChain(t, g.env, s, retry.RefreshToken)
	})
}

// TestRefreshGraceReuse: past the window, or once the successor has been
// used, the old token is reuse: invalid_grant, and the whole family is
// revoked (the successor's chain too). So is a grace answer whose
// successor is used before it commits.
func TestRefreshGraceReuse(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		spendFirst := &usedFirst{Store: s}
		g := newGraceEnv(t, spendFirst, graceWindow)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(g.logs.String())
			}
		})
		wantRevoked := func(t *testing.T, what, old string, live ...string) {
			t.Helper()
			st, m := refresh(g.env, publicID, old)
			if st != http.StatusBadRequest || m["error"] != "invalid_grant" {
				t.Fatalf("%s: %d %v, want 400 invalid_grant", what, st, m)
			}
			for _, rt := range live {
				if st, m := refresh(g.env, publicID, rt); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
					t.Fatalf("%s: the family's newest token still refreshes: %d %v", what, st, m)
				}
			}
			if n := g.graceAnswers(t); n != 0 {
				t.Fatalf("%s: linkslot_refresh_grace_total = %v, want 0", what, n)
			}
		}
		// Past the window (the clock moved, not slept); last, since a
		// clock ahead of fosite's makes the next sign-in's auth_time lie
		// in its future.
		window := func() {
			rt := g.family(t)
			next, err := refreshAt(g.issuer, rt)
			if err != nil {
				t.Fatal(err)
			}
			g.offset.Add(int64(graceWindow + time.Second))
			wantRevoked(t, "31 s after the rotation", rt, next.RefreshToken)
		}

		// Once the successor has rotated.
		rt := g.family(t)
		next, err := refreshAt(g.issuer, rt)
		if err != nil {
			t.Fatal(err)
		}
		after, err := refreshAt(g.issuer, next.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		wantRevoked(t, "the old token after its successor rotated", rt, after.RefreshToken)

		// A grace answer whose successor is spent before it commits.
		rt = g.family(t)
		if next, err = refreshAt(g.issuer, rt); err != nil {
			t.Fatal(err)
		}
		spendFirst.on.Store(true)
		wantRevoked(t, "a grace answer whose successor was spent first", rt, next.RefreshToken)
		spendFirst.on.Store(false)
		if _, live := refreshRows(t, s, rt); live != 0 {
			t.Fatalf("%d live refresh sessions left in the family", live)
		}
		window()
	})
}

// usedFirst uses up, on the store it wraps, the sessions a batch requires
// before writing it: the successor of a grace answer rotated by another
// request between the answer's check and its commit.
type usedFirst struct {
	store.Store
	on atomic.Bool
}

func (u *usedFirst) ApplyTokenBatch(ctx context.Context, b store.TokenBatch) error {
	for _, r := range b.Require {
		if !u.on.Load() {
			break
		}
		if err := u.Store.DeactivateTokenSession(ctx, r.Kind, r.SignatureHash); err != nil {
			return err
		}
	}
	return u.Store.ApplyTokenBatch(ctx, b)
}

// TestRefreshGraceOff: LINKSLOT_REFRESH_GRACE=0 behaves as before the grace:
// a rotation records nothing more, a retried refresh is reuse that revokes
// the family, and of concurrent refreshes at most one answers 200.
func TestRefreshGraceOff(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		g := newGraceEnv(t, s, 0)
		rt := g.family(t)
		next, err := refreshAt(g.issuer, rt)
		if err != nil {
			t.Fatal(err)
		}
		if spent := sessionOf(t, s, rt); spent.Active || !spent.RotatedAt.IsZero() || spent.Successor != nil {
			t.Fatalf("the spent token with the grace off: %+v", spent)
		}
		if st, m := refresh(g.env, publicID, rt); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
			t.Fatalf("retry with the grace off: %d %v, want 400 invalid_grant", st, m)
		}
		if st, _ := refresh(g.env, publicID, next.RefreshToken); st != http.StatusBadRequest {
			t.Fatalf("the successor still refreshes after reuse with the grace off: %d", st)
		}
		rt = g.family(t)
		ok, _, failures := concurrentRefreshes([]string{g.issuer}, rt, 8)
		if ok > 1 || ok+len(failures) != 8 {
			t.Fatalf("8 concurrent refreshes with the grace off: %d answered 200, %d failed", ok, len(failures))
		}
		if n := g.graceAnswers(t); n != 0 {
			t.Fatalf("linkslot_refresh_grace_total = %v with the grace off", n)
		}
	})
}

// TestRefreshGraceAbsoluteLifetime: a grace answer never outlives the
// family's absolute lifetime: once the successor has expired with the
// family, the old token presented within its window is reuse.
func TestRefreshGraceAbsoluteLifetime(t *testing.T) {
	s := sqltest.SQLite(t)
	m := metrics.New("authserver")
	e := newEnvWith(t, s, func(d *authhttp.Deps) {
		d.Config.RefreshGrace, d.Config.RefreshIdle, d.Config.RefreshAbsolute = graceWindow, time.Hour, time.Hour
		d.Metrics = m
	})
	g := &graceEnv{env: e, m: m}
	rt := g.family(t)
	g.offset.Add(int64(time.Hour - 10*time.Second))
	next, err := refreshAt(g.issuer, rt)
	if err != nil {
		t.Fatal(err)
	}
	if exp := sessionOf(t, s, next.RefreshToken).ExpiresAt; exp.After(sessionOf(t, s, rt).ExpiresAt) {
		t.Fatalf("the successor expires at %v, after the family's end %v", exp, sessionOf(t, s, rt).ExpiresAt)
	}
	if again, err := refreshAt(g.issuer, rt); err != nil || again.RefreshToken != next.RefreshToken {
		t.Fatalf("within the window and the family's lifetime: %v", err)
	}
	g.offset.Add(int64(15 * time.Second)) // 5 s past the family's end, 15 s after the rotation
	if st, m := refresh(g.env, publicID, rt); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
		t.Fatalf("within the window but past the family's end: %d %v, want invalid_grant", st, m)
	}
	if n := g.graceAnswers(t); n != 1 {
		t.Fatalf("linkslot_refresh_grace_total = %v, want 1", n)
	}
}

// TestRefreshGraceSealed: the database holds the successor only sealed, and
// a sealed successor moved onto another spent row does not open there: the
// token presented is then reuse, not an answer with another family's token.
func TestRefreshGraceSealed(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		g := newGraceEnv(t, s, graceWindow)
		rt, other := g.family(t), g.family(t)
		next, err := refreshAt(g.issuer, rt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := refreshAt(g.issuer, other); err != nil {
			t.Fatal(err)
		}
		spent := sessionOf(t, s, rt)
		sig := next.RefreshToken[strings.LastIndexByte(next.RefreshToken, '.')+1:]
		if len(spent.Successor) == 0 || strings.Contains(string(spent.Successor), sig) || spent.RotatedAt.IsZero() {
			t.Fatalf("the spent row's successor: %d bytes, holds the token's signature %v, rotated at %v",
				len(spent.Successor), strings.Contains(string(spent.Successor), sig), spent.RotatedAt)
		}
		moved := sessionOf(t, s, other).Successor
		if err := s.DB().Exec(`UPDATE token_sessions SET successor = ? WHERE kind = ? AND signature_hash = ?`,
			moved, string(store.KindRefreshToken), spent.SignatureHash).Error; err != nil {
			t.Fatal(err)
		}
		if st, m := refresh(g.env, publicID, rt); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
			t.Fatalf("a spent token with another row's sealed successor: %d %v, want 400 invalid_grant", st, m)
		}
		if n := g.graceAnswers(t); n != 0 {
			t.Fatalf("linkslot_refresh_grace_total = %v, want 0", n)
		}
	})
}
