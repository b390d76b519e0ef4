package provider_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ory/fosite/token/jwt"
	"golang.org/x/oauth2"
	"gorm.io/gorm/logger"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestFastPathsNeedNoPreparation: a code exchange and a refresh rotation
// made through the provider on a bare context.Background(), with no
// fositestore call of the caller's, cost the statements
// TestStatementCounts in authserver/authhttp holds the server to (2 each
// on PostgreSQL): the provider begins the storage's per-request state
// itself (fositestore.Store.Begin). The same requests on a store
// configured without the fast paths cost more, so the count tells them
// apart.
func TestFastPathsNeedNoPreparation(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		counted := &statements{}
		db := s.DB()
		db.Logger = countingLogger{db.Logger, counted}
		fast := flowCost(t, s, counted, fositestore.Options{})
		slow := flowCost(t, s, counted, fositestore.Options{NoReadCache: true, NoJoinedDeletes: true})
		t.Logf("%s: code exchange %d statements, refresh rotation %d (without the fast paths %d, %d)",
			s.Dialect(), fast.exchange, fast.rotation, slow.exchange, slow.rotation)
		want := map[string]int{"postgres": 2, "sqlite": 3}[s.Dialect()]
		if fast.exchange != want || fast.rotation != want {
			t.Errorf("code exchange %d statements, refresh rotation %d; want %d each", fast.exchange, fast.rotation, want)
		}
		if slow.exchange <= fast.exchange || slow.rotation <= fast.rotation {
			t.Errorf("without the fast paths: code exchange %d statements, refresh rotation %d; want more than %d, %d",
				slow.exchange, slow.rotation, fast.exchange, fast.rotation)
		}
	})
}

type cost struct{ exchange, rotation int }

// flowCost issues a code through the provider on storage configured by
// opts, then counts the statements of its exchange and of the rotation of
// the refresh token it answers, each made on a bare context.
func flowCost(t *testing.T, s *sqlstore.Store, counted *statements, opts fositestore.Options) cost {
	t.Helper()
	ctx := context.Background()
	const issuer, resource, redirect = "https://as.example", "https://rs.example", "http://127.0.0.1/callback"
	now := time.Now()
	clientID, acct := "fast-"+store.RandomString(6), store.Account{ID: store.NewID("acct"),
		Email: "fast-" + store.RandomString(6) + "@example.com", PasswordHash: "unused", CreatedAt: now, UpdatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(ctx, store.Client{ID: clientID, Name: "Fast", Public: true, RedirectURIs: []string{redirect},
		AllowedScopes: []string{"openid", "offline_access"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	km := keys.NewManager(s, secret, store.KeyPurposeToken, nil)
	if err := (keys.Set{km}).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	opts.Audience = []string{resource}
	fs := fositestore.New(s, opts)
	p, err := provider.New(fs, km, provider.Config{Issuer: issuer, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.SigningKey(ctx); err != nil { // read once, as the servers do at start
		t.Fatal(err)
	}

	verifier := oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"scope": {"openid offline_access"}, "state": {"state-1234567890"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}}
	ar, err := p.NewAuthorizeRequest(ctx, httptest.NewRequest(http.MethodGet, issuer+"/oauth2/auth?"+q.Encode(), nil), provider.Known{})
	if err != nil {
		t.Fatalf("authorize request: %v", err)
	}
	ar.GrantScope("openid")
	ar.GrantScope("offline_access")
	ar.GrantAudience(resource)
	at := now.UTC().Truncate(time.Second)
	sess := &fositestore.Session{Subject: acct.ID, ClientID: clientID, AuthTime: at, GrantedAt: now,
		IDClaims: &jwt.IDTokenClaims{Subject: acct.ID, AuthTime: at, RequestedAt: at, Extra: map[string]any{}}}
	tctx, err := fs.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	aresp, err := p.NewAuthorizeResponse(tctx, ar, sess)
	if err != nil {
		t.Fatalf("authorize response: %v", err)
	}
	if err := fs.Commit(tctx); err != nil {
		t.Fatal(err)
	}

	// token makes one token request on a bare context and answers its
	// refresh token and the statements it cost.
	token := func(form url.Values) (string, int) {
		t.Helper()
		form.Set("client_id", clientID)
		r := httptest.NewRequest(http.MethodPost, issuer+"/oauth2/token", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		counted.take()
		ar, err := p.NewAccessRequest(context.Background(), r, fositestore.NewSession())
		if err != nil {
			t.Fatalf("%s: access request: %v", form.Get("grant_type"), err)
		}
		resp, err := p.NewAccessResponse(context.Background(), ar)
		if err != nil {
			t.Fatalf("%s: access response: %v", form.Get("grant_type"), err)
		}
		n := counted.take()
		rt, _ := resp.GetExtra("refresh_token").(string)
		if resp.GetAccessToken() == "" || rt == "" {
			t.Fatalf("%s: answer without an access or refresh token", form.Get("grant_type"))
		}
		return rt, n
	}
	var c cost
	rt, n := token(url.Values{"grant_type": {"authorization_code"}, "code": {aresp.GetCode()},
		"code_verifier": {verifier}, "redirect_uri": {redirect}})
	c.exchange = n
	_, c.rotation = token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	return c
}

// statements counts the SQL statements the store's gorm logger traces
// (every statement, those the store sends past gorm included).
type statements struct {
	mu sync.Mutex
	n  int
}

// take answers the count so far and starts afresh.
func (s *statements) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n = 0
	return n
}

// countingLogger is a gorm logger that counts each statement it traces.
type countingLogger struct {
	logger.Interface
	s *statements
}

func (l countingLogger) LogMode(level logger.LogLevel) logger.Interface {
	return countingLogger{l.Interface.LogMode(level), l.s}
}

func (l countingLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	l.s.mu.Lock()
	l.s.n++
	l.s.mu.Unlock()
	l.Interface.Trace(ctx, begin, fc, err)
}
