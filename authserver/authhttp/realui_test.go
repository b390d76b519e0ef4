package authhttp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestWithConsentUI runs the code flow through the real consent pages:
// sign in with a password, approve on the consent page, exchange the code.
func TestWithConsentUI(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer srv.Close()
	now := store.SystemClock()
	ph, err := password.Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	acct := store.Account{ID: store.NewID("acct"), Email: "ui@example.com", PasswordHash: ph, CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(ctx, store.Client{ID: publicID, Name: "Demo", Public: true,
		RedirectURIs: []string{"http://127.0.0.1/callback"}, AllowedScopes: []string{"openid", "bookings:read"},
		DefaultScopes: []string{"bookings:read"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	secret := []byte("ui-test-secret-key-ui-test-secret-key")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, _, err = authhttp.Wire(ctx, authhttp.Deps{Store: s, Logger: log, Config: config.Config{Issuer: srv.URL,
		Resource: resource, SecretKey: secret, RefreshIdle: time.Hour, RefreshAbsolute: 2 * time.Hour}}, authhttp.Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != strings.TrimPrefix(srv.URL, "http://") {
			return http.ErrUseLastResponse // stop at the client's callback
		}
		return nil
	}}
	read := func(resp *http.Response) string {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}
	c := &oauth2.Config{ClientID: publicID, RedirectURL: "http://127.0.0.1:41234/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth2/authorize", TokenURL: srv.URL + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	v := oauth2.GenerateVerifier()

	// Signed out: the authorize request lands on the sign-in page.
	resp, err := browser.Get(c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Request.URL.Path != "/login" {
		t.Fatalf("landed on %s", resp.Request.URL)
	}
	form := testkit.HiddenFields(read(resp))
	form.Set("email", acct.Email)
	form.Set("password", "correct horse battery")
	// Signing in follows next back to authorize, which shows consent.
	resp, err = browser.PostForm(srv.URL+"/login", form)
	if err != nil {
		t.Fatal(err)
	}
	body := read(resp)
	if resp.Request.URL.Path != "/oauth2/authorize" || !strings.Contains(body, "bookings:read") {
		t.Fatalf("after sign-in: %d %s", resp.StatusCode, resp.Request.URL)
	}
	form = testkit.HiddenFields(body)
	form.Set("decision", "allow")
	resp, err = browser.PostForm(srv.URL+"/oauth2/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	read(resp)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("iss") != srv.URL {
		t.Fatalf("consent answer %d, location %v", resp.StatusCode, loc)
	}
	tok, err := c.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.Extra("id_token") == nil {
		t.Fatal("missing refresh or ID token")
	}
}
