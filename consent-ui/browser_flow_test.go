package consentui_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// TestBrowserAuthorizationFlow drives the real authorization server with
// these pages in headless Chromium: sign up (the verification e-mail goes
// through the outbox to an SMTP server), start an authorization with
// golang.org/x/oauth2 (PKCE S256), sign in, deny (access_denied), allow (a
// code the client exchanges), remembered consent through the sign-in form,
// and Disconnect, after which the refresh token is refused and the resource
// server refuses the link's access token within 5 seconds.
func TestBrowserAuthorizationFlow(t *testing.T) {
	ctx := chromium.New(t)
	bg := context.Background()
	sy := newSystem(t)
	logs, srv := sy.logs, struct{ URL string }{sy.url}
	toolsList := sy.toolsList

	conf, waitClient := sy.demoClient()
	const email, pw = "ada@example.com", "Flow-Canary-Passphrase-9"
	var pages []string
	snapshot := func() {
		html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
		must(t, err, "page HTML")
		pages = append(pages, html)
	}
	start := func(state string) string {
		verifier := oauth2.GenerateVerifier()
		must(t, chromedp.Do(ctx, chromedp.Navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))), "start authorization")
		return verifier
	}

	// Sign up.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/signup")), "open sign-up")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	typeInto(t, ctx, "Repeat password", pw)
	press(t, ctx, "Create account")
	snapshot()

	// Start an authorization: sign in first, then the consent page; Deny.
	start("deny-state")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "sign-in page")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("wants to connect"))), "consent page")
	snapshot()
	text := bodyText(t, ctx)
	for _, want := range []string{"Demo MCP client", email, "See your bookings and check availability",
		"Book, move and cancel appointments, each only after you confirm", "127.0.0.1"} {
		if !strings.Contains(text, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	// The address is not confirmed yet: no Allow, a new link on offer.
	if !strings.Contains(text, "Confirm your e-mail address first") {
		t.Errorf("the consent page of an unverified account does not ask to confirm the address")
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('button[value=allow]').length`)); err != nil || n != 0 {
		t.Fatalf("an unverified account is offered Allow (%d buttons, %v)", n, err)
	}
	press(t, ctx, "Deny")
	if q := waitClient("deny"); q.Get("error") != "access_denied" || q.Get("state") != "deny-state" || q.Get("code") != "" {
		t.Fatalf("deny: client got %v", q)
	}
	// The verification e-mail, delivered by the outbox worker to the SMTP
	// server and parsed with the MIME libraries: its link confirms the
	// address.
	verifyLink := sy.mailLink(1, email, "/verify")
	must(t, chromedp.Do(ctx, chromedp.Navigate(verifyLink), chromedp.WaitVisible(heading("confirmed"))), "open the verification link")
	snapshot()
	must(t, chromedp.Do(ctx, chromedp.Navigate(verifyLink), chromedp.WaitVisible(heading("used already"))), "open it again")

	// Allow: the client receives a code and exchanges it with its verifier.
	verifier := start("allow-state")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("wants to connect"))), "consent page again")
	press(t, ctx, "Allow")
	q := waitClient("allow")
	if q.Get("code") == "" || q.Get("state") != "allow-state" || q.Get("iss") != srv.URL {
		t.Fatalf("allow: client got %v", q)
	}
	tok, err := conf.Exchange(bg, q.Get("code"), oauth2.VerifierOption(verifier))
	must(t, err, "exchange the code")
	if tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("token response lacks tokens: access=%v refresh=%v", tok.AccessToken != "", tok.RefreshToken != "")
	}
	secrets := []string{pw, q.Get("code"), tok.AccessToken, tok.RefreshToken}
	if code := toolsList(tok.AccessToken); code != http.StatusOK {
		t.Fatalf("the linked agent's tools/list answered %d, want 200", code)
	}

	// Remembered consent through the sign-in form: sign out, start again,
	// sign in, and the form's redirects reach the client directly.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/account")), "account")
	press(t, ctx, "Sign out")
	start("again-state")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(heading("Sign in"))), "sign-in page again")
	snapshot()
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	press(t, ctx, "Sign in")
	if q := waitClient("remembered consent"); q.Get("code") == "" || q.Get("state") != "again-state" {
		t.Fatalf("remembered consent: client got %v", q)
	}
	secrets = append(secrets, q.Get("code"))

	// Disconnect on Connected apps: the refresh token is refused at once.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/account/connections"), chromedp.WaitVisible(heading("Connected apps"))), "connections")
	if !strings.Contains(bodyText(t, ctx), "Demo MCP client") {
		t.Fatal("the link is not listed")
	}
	snapshot()
	press(t, ctx, "Disconnect")
	snapshot()
	if !strings.Contains(bodyText(t, ctx), "was disconnected") {
		t.Fatal("no confirmation of the disconnect")
	}
	expired := &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}
	_, err = conf.TokenSource(bg, expired).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh after disconnect: %v, want invalid_grant", err)
	}
	// The resource server refuses the link's access token within 5 s.
	sy.rsSkew.Store(int64(5 * time.Second))
	if code := toolsList(tok.AccessToken); code != http.StatusUnauthorized {
		t.Fatalf("the resource server answered %d to a disconnected link's token 5 s later, want 401", code)
	}

	// No page and no log line carries the password, a code or a token.
	all := strings.Join(pages, "\n") + logs.String()
	for i, sec := range secrets {
		if sec != "" && strings.Contains(all, sec) {
			t.Errorf("secret #%d appears in a page or the logs", i)
		}
	}
}
