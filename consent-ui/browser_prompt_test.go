package consentui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// TestBrowserPromptAndMaxAge drives OpenID Connect prompt and max_age
// (docs/prompt-and-max-age.md) through the real pages in headless
// Chromium, with golang.org/x/oauth2 for the client and go-oidc verifying
// every ID token's auth_time — from the code exchange and from a refresh.
// Sign-ins are aged with the identity service's clock, never by sleeping.
func TestBrowserPromptAndMaxAge(t *testing.T) {
	ctx := chromium.New(t)
	bg := context.Background()
	sy := newSystem(t)
	const email, pw = "grace@example.com", "Prompt-Canary-Passphrase-7"
	now := store.SystemClock()
	hash, _ := cheapHasher{}.Hash(bg, pw)
	must(t, sy.store.CreateAccount(bg, store.Account{ID: store.NewID("acct"), Email: email, PasswordHash: hash,
		CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}), "account")

	conf, waitClient := sy.demoClient()
	provider, err := oidc.NewProvider(bg, sy.url)
	must(t, err, "OpenID discovery")
	verifier := provider.Verifier(&oidc.Config{ClientID: conf.ClientID})

	// start opens an authorization with the extra parameters; the
	// verifier is the code's PKCE verifier.
	start := func(state string, conf *oauth2.Config, extra ...string) string {
		t.Helper()
		v := oauth2.GenerateVerifier()
		opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(v)}
		for i := 0; i+1 < len(extra); i += 2 {
			opts = append(opts, oauth2.SetAuthURLParam(extra[i], extra[i+1]))
		}
		must(t, chromedp.Do(ctx, chromedp.Navigate(conf.AuthCodeURL(state, opts...))), "start authorization "+state)
		return v
	}
	// authTime verifies the ID token of tok with go-oidc and returns its
	// auth_time.
	authTime := func(what string, tok *oauth2.Token) time.Time {
		t.Helper()
		raw, _ := tok.Extra("id_token").(string)
		if raw == "" {
			t.Fatalf("%s: no ID token", what)
		}
		idt, err := verifier.Verify(bg, raw)
		must(t, err, what+": verify the ID token")
		var c struct {
			AuthTime *int64 `json:"auth_time"`
		}
		must(t, idt.Claims(&c), what+": ID token claims")
		if c.AuthTime == nil {
			t.Fatalf("%s: the ID token has no auth_time", what)
		}
		return time.Unix(*c.AuthTime, 0)
	}
	// code expects the client to receive a code for state, and exchanges it.
	code := func(what, state, v string) *oauth2.Token {
		t.Helper()
		q := waitClient(what)
		if q.Get("code") == "" || q.Get("state") != state || q.Get("iss") != sy.url {
			t.Fatalf("%s: client got %v, want a code with state and iss", what, q)
		}
		tok, err := conf.Exchange(bg, q.Get("code"), oauth2.VerifierOption(v))
		must(t, err, what+": exchange the code")
		return tok
	}
	// refused expects the client to receive error for state, with iss.
	refused := func(what, state, want string) {
		t.Helper()
		q := waitClient(what)
		if q.Get("error") != want || q.Get("code") != "" || q.Get("state") != state || q.Get("iss") != sy.url {
			t.Fatalf("%s: client got %v, want error=%s with state and iss", what, q, want)
		}
	}
	// near reports whether an auth_time is the second of want, give or
	// take the time a step takes.
	near := func(at, want time.Time) bool { d := at.Sub(want); return d > -5*time.Second && d < 5*time.Second }
	// signInAgain expects the sign-in page shown to a signed-in person,
	// filled in with their address, and signs in with the password.
	signInAgain := func(what string) {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), what+": sign-in page")
		if text := bodyText(t, ctx); !strings.Contains(text, "asks you to sign in again") {
			t.Errorf("%s: the sign-in page does not say why it asks again: %q", what, text)
		}
		filled, err := chromedp.Run(ctx, chromedp.Value(field("Email")))
		if must(t, err, what+": read the address"); filled != email {
			t.Errorf("%s: the address field holds %q, want %q", what, filled, email)
		}
		typeInto(t, ctx, "Password", pw)
		press(t, ctx, "Sign in")
	}

	// First connection, signed in three hours ago: sign in, Allow.
	sy.idSkew.Store(int64(-3 * time.Hour))
	v := start("first", conf)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "sign-in page")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("wants to connect"))), "consent page")
	press(t, ctx, "Allow")
	tok := code("first", "first", v)
	at0 := authTime("first code", tok)
	if !near(at0, time.Now().Add(-3*time.Hour)) {
		t.Fatalf("auth_time %v, want the sign-in three hours ago", at0)
	}
	// A refresh's ID token keeps the sign-in's auth_time.
	refreshed, err := conf.TokenSource(bg, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	must(t, err, "refresh")
	if at := authTime("refresh", refreshed); !at.Equal(at0) {
		t.Errorf("refreshed ID token auth_time %v, want the sign-in's %v", at, at0)
	}

	// prompt=login: the sign-in page although signed in; after signing in
	// the code arrives, consent being remembered, and auth_time moved
	// forward to the new sign-in.
	sy.idSkew.Store(0)
	v = start("login", conf, "prompt", "login")
	signInAgain("prompt=login")
	at1 := authTime("prompt=login", code("prompt=login", "login", v))
	if !at1.After(at0) || !near(at1, time.Now()) {
		t.Fatalf("prompt=login: auth_time %v, want the new sign-in just now, after %v", at1, at0)
	}

	// max_age: a sign-in two hours old (signed out, then in with the
	// identity clock behind) is older than an hour, so the password is
	// asked again; the fresh one is young enough, so the code comes
	// without a page.
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account")), "account")
	press(t, ctx, "Sign out")
	sy.idSkew.Store(int64(-2 * time.Hour))
	v = start("aged", conf)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "sign-in page, aged")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
	if at := authTime("aged sign-in", code("aged sign-in", "aged", v)); !near(at, time.Now().Add(-2*time.Hour)) {
		t.Fatalf("auth_time %v, want the sign-in two hours ago", at)
	}
	sy.idSkew.Store(0)
	v = start("old", conf, "max_age", "3600")
	signInAgain("max_age, old sign-in")
	tok = code("max_age, old sign-in", "old", v)
	at2 := authTime("max_age, old sign-in", tok)
	if !near(at2, time.Now()) {
		t.Fatalf("max_age: auth_time %v, want the sign-in just now", at2)
	}
	v = start("fresh", conf, "max_age", "3600")
	if at := authTime("max_age, fresh sign-in", code("max_age, fresh sign-in", "fresh", v)); !at.Equal(at2) {
		t.Errorf("max_age, fresh sign-in: auth_time %v, want %v", at, at2)
	}
	// A refresh of the grant from the later sign-in carries that sign-in.
	refreshed, err = conf.TokenSource(bg, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	must(t, err, "refresh the later grant")
	if at := authTime("refresh of the later grant", refreshed); !at.Equal(at2) {
		t.Errorf("the later grant's refreshed ID token auth_time %v, want its sign-in's %v", at, at2)
	}

	// prompt=consent: the consent page although consent is remembered.
	v = start("consent", conf, "prompt", "consent")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("wants to connect"))), "prompt=consent: consent page")
	press(t, ctx, "Allow")
	code("prompt=consent", "consent", v)

	// prompt=none: signed in and remembered, the code without a page; a
	// scope not yet approved is consent_required; none with another
	// value is invalid_request.
	v = start("none", conf, "prompt", "none")
	code("prompt=none", "none", v)
	withEmail := *conf
	withEmail.Scopes = []string{"openid", "email"}
	start("none-email", &withEmail, "prompt", "none")
	refused("prompt=none, new scope", "none-email", "consent_required")
	start("none-login", conf, "prompt", "none login")
	refused("prompt=none login", "none-login", "invalid_request")

	// Signed out, prompt=none is login_required.
	must(t, chromedp.Do(ctx, chromedp.Navigate(sy.url+"/account")), "account")
	press(t, ctx, "Sign out")
	start("none-out", conf, "prompt", "none")
	refused("prompt=none signed out", "none-out", "login_required")

	// Signed out, prompt=login asks once: one sign-in, then the code.
	v = start("login-out", conf, "prompt", "login")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "prompt=login signed out: sign-in page")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
	code("prompt=login signed out", "login-out", v)

	if logs := sy.logs.String(); strings.Contains(logs, pw) {
		t.Error("the password appears in the logs")
	}
}
