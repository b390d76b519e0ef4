package consentui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/linkslot/linkslot/internal/testkit/chromium"
)

// virtualAuthenticator enables the DevTools WebAuthn domain on the tab and
// adds a platform authenticator that keeps discoverable credentials and
// verifies its user, the way a phone or laptop with a fingerprint does.
func virtualAuthenticator(t *testing.T, ctx context.Context) webauthn.AuthenticatorID {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Action[webauthn.AuthenticatorID](func(ctx context.Context, tg *chromedp.Target) (webauthn.AuthenticatorID, error) {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return "", err
		}
		res, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		}})
		return res.AuthenticatorID, err
	}))
	must(t, err, "virtual authenticator")
	return id
}

// credentials lists what the virtual authenticator holds.
func credentials(t *testing.T, ctx context.Context, id webauthn.AuthenticatorID) []*webauthn.Credential {
	t.Helper()
	cs, err := chromedp.Run(ctx, chromedp.Action[[]*webauthn.Credential](func(ctx context.Context, tg *chromedp.Target) ([]*webauthn.Credential, error) {
		res, err := cdp.Call(ctx, tg, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
		return res.Credentials, err
	}))
	must(t, err, "credentials")
	return cs
}

// bogusSignatures makes the authenticator sign with zeros (or not).
func bogusSignatures(t *testing.T, ctx context.Context, id webauthn.AuthenticatorID, on bool) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, webauthn.SetResponseOverrideBits, webauthn.SetResponseOverrideBitsParams{AuthenticatorID: id, IsBogusSignature: &on})
		return err
	})), "override bits")
}

// userVerified makes the authenticator's fingerprint check succeed or
// fail; a failed one is what a person who cancels the prompt produces.
func userVerified(t *testing.T, ctx context.Context, id webauthn.AuthenticatorID, ok bool) {
	t.Helper()
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, webauthn.SetUserVerified, webauthn.SetUserVerifiedParams{AuthenticatorID: id, IsUserVerified: ok})
		return err
	})), "user verification")
}

// statusMessage waits for the failure a passkey form shows.
func statusMessage(t *testing.T, ctx context.Context) string {
	t.Helper()
	msg, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const s = document.querySelector('.passkey-status.bad'); return s && s.textContent; })()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	must(t, err, "failure message")
	return msg
}

func scripts(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	off := !on
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return err
	})), "script execution")
}

// pressPasskey presses a button that runs a passkey ceremony in the page
// script and waits for the page the form then loads; it returns its
// status, or fails with the message the page shows when none loads.
func pressPasskey(t *testing.T, ctx context.Context, text string) int64 {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(tctx, chromedp.Click(button(text)))
	if err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('.passkey-status')).map(e => e.textContent).join(' ')`))
		t.Fatalf("press %s: %v (the page says %q)", text, err, msg)
	}
	return resp.Status
}

// TestBrowserPasskeys runs the passkey pages in a real Chromium with a
// virtual authenticator (DevTools WebAuthn domain, CTAP2, internal
// transport, resident keys, user verification): add a passkey on the
// account page, see a second one on the same device refused with a clear
// message and nothing changed, sign out, sign in with the passkey (no
// address typed), see its last use, remove it and have passkey sign-in
// refused afterwards; password sign-in with JavaScript off; then delete
// the account confirmed by a passkey, after a cancelled confirmation and
// a passkey with a bad signature deleted nothing. Phone and desktop screenshots of each page.
func TestBrowserPasskeys(t *testing.T) {
	ctx := chromium.New(t)
	e := newEnv(t, envOpts{localhost: true})
	bg := context.Background()
	dir := chromium.ScreenshotDir(t)
	auth := virtualAuthenticator(t, ctx)
	const email, pw = "passkey.person@example.com", "Browser-Passkey-Passphrase-7"
	acct := e.client().signUpAndIn(email, pw) // the account; the browser signs in below

	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/login")), "open sign-in")
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign-in answered %d", st)
	}

	// Add a passkey from the account page.
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(`//a[@href="/account/passkeys"]`))
	must(t, err, "open passkeys")
	if resp.Status != 200 || !strings.Contains(bodyText(t, ctx), "You have no passkey yet") {
		t.Fatalf("passkeys page: %d", resp.Status)
	}
	shootPage(t, ctx, e.base, dir, "passkeys-empty", "/account/passkeys", button("Add a passkey"))
	typeInto(t, ctx, "Name", "This laptop")
	if st := pressPasskey(t, ctx, "Add a passkey"); st != 200 {
		t.Fatalf("adding answered %d", st)
	}
	text := bodyText(t, ctx)
	for _, want := range []string{"Your passkey was added", "This laptop", "Not used yet"} {
		if !strings.Contains(text, want) {
			t.Errorf("after adding, the page lacks %q:\n%s", want, text)
		}
	}
	cs := credentials(t, ctx, auth)
	if len(cs) != 1 || !cs[0].IsResidentCredential || cs[0].RpID != "localhost" || string(cs[0].UserHandle) != acct.ID {
		t.Fatalf("authenticator credentials: %+v", cs)
	}
	ps, err := e.store.ListPasskeys(bg, acct.ID)
	if err != nil || len(ps) != 1 || string(ps[0].CredentialID) != string(cs[0].CredentialID) {
		t.Fatalf("stored passkeys: %+v %v", ps, err)
	}

	// The same device again: the browser refuses (it holds an excluded
	// credential), the page says so, and nothing changes.
	typeInto(t, ctx, "Name", "Again")
	must(t, chromedp.Do(ctx, chromedp.Click(button("Add a passkey"))), "add again")
	if msg := statusMessage(t, ctx); !strings.HasPrefix(msg, "No passkey was added") {
		t.Errorf("failure message %q", msg)
	}
	if ps, _ := e.store.ListPasskeys(bg, acct.ID); len(ps) != 1 {
		t.Errorf("a refused ceremony changed the passkeys: %d", len(ps))
	}

	// Sign out, and back in with the passkey alone.
	if st := press(t, ctx, "Sign out"); st != 200 {
		t.Fatalf("sign-out answered %d", st)
	}
	shootPage(t, ctx, e.base, dir, "login-passkey", "/login", button("Sign in with a passkey"))
	if st := pressPasskey(t, ctx, "Sign in with a passkey"); st != 200 || !strings.Contains(bodyText(t, ctx), "Your account") {
		t.Fatalf("passkey sign-in: %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/account/passkeys"), chromedp.WaitVisible(heading("Passkeys"))), "passkeys")
	if text := bodyText(t, ctx); !strings.Contains(text, "Last used") {
		t.Errorf("last use not shown:\n%s", text)
	}
	if ps, _ := e.store.ListPasskeys(bg, acct.ID); ps[0].LastUsedAt == nil {
		t.Error("last use not stored")
	}
	shootPage(t, ctx, e.base, dir, "passkeys", "/account/passkeys", heading("Passkeys"))

	// Remove it; passkey sign-in is refused afterwards, though the
	// authenticator still offers its credential.
	if st := press(t, ctx, "Remove"); st != 200 || !strings.Contains(bodyText(t, ctx), "The passkey was removed") {
		t.Fatalf("remove: %d", st)
	}
	if st := press(t, ctx, "Sign out"); st != 200 {
		t.Fatalf("sign-out answered %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(button("Sign in with a passkey"))), "passkey button")
	if st := pressPasskey(t, ctx, "Sign in with a passkey"); st != 422 {
		t.Errorf("sign-in with a removed passkey answered %d", st)
	}
	if text := bodyText(t, ctx); !strings.Contains(text, "You are not signed in: this passkey is not registered with Linkslot") {
		t.Errorf("refusal page:\n%s", text)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/account"), chromedp.WaitVisible(heading("Sign in"))), "still signed out")

	// JavaScript off: no passkey button, and the password signs in.
	scripts(t, ctx, false)
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/login"), chromedp.WaitVisible(button("Sign in"))), "sign-in without JavaScript")
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = [...document.querySelectorAll('button')].find(b => b.textContent.includes('passkey')); return !!b && b.offsetParent !== null; })()`))
	must(t, err, "passkey button")
	if visible {
		t.Error("the passkey button shows without JavaScript")
	}
	typeInto(t, ctx, "Email", email)
	typeInto(t, ctx, "Password", pw)
	if st := press(t, ctx, "Sign in"); st != 200 || !strings.Contains(bodyText(t, ctx), "Your account") {
		t.Fatalf("password sign-in without JavaScript: %d", st)
	}
	scripts(t, ctx, true)

	// Add a passkey again and delete the account with it: a bad signature
	// deletes nothing, the passkey itself deletes the account.
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/account/passkeys"), chromedp.WaitVisible(button("Add a passkey"))), "passkeys")
	typeInto(t, ctx, "Name", "Phone")
	if st := pressPasskey(t, ctx, "Add a passkey"); st != 200 {
		t.Fatalf("adding answered %d", st)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/account/delete"), chromedp.WaitVisible(button("Delete with a passkey"))), "delete page")
	shootPage(t, ctx, e.base, dir, "delete-passkey", "/account/delete", button("Delete with a passkey"))
	// The person does not confirm on the device (the fingerprint check
	// fails, as when the prompt is cancelled): the browser sends nothing.
	userVerified(t, ctx, auth, false)
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("confirm_passkey")), chromedp.Click(button("Delete with a passkey"))), "delete unverified")
	if msg := statusMessage(t, ctx); msg != "Nothing was deleted: the passkey request was cancelled or timed out. Try again, or use your password." {
		t.Errorf("cancelled confirmation says %q", msg)
	}
	if a, _ := e.store.GetAccount(bg, acct.ID); a.DeletedAt != nil {
		t.Fatal("a cancelled confirmation deleted the account")
	}
	userVerified(t, ctx, auth, true)
	// A signature that does not verify: the server refuses.
	bogusSignatures(t, ctx, auth, true)
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/account/delete"), chromedp.WaitVisible(button("Delete with a passkey"))), "delete page")
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("confirm_passkey"))), "tick")
	if st := pressPasskey(t, ctx, "Delete with a passkey"); st != 422 || !strings.Contains(bodyText(t, ctx), "Nothing was deleted: the passkey could not be verified") {
		t.Fatalf("bad signature: %d %s", st, bodyText(t, ctx))
	}
	if a, _ := e.store.GetAccount(bg, acct.ID); a.DeletedAt != nil {
		t.Fatal("a bad signature deleted the account")
	}
	bogusSignatures(t, ctx, auth, false)
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("confirm_passkey"))), "tick")
	if st := pressPasskey(t, ctx, "Delete with a passkey"); st != 200 || !strings.Contains(bodyText(t, ctx), "Your account was deleted") {
		t.Fatalf("delete with a passkey: %d", st)
	}
	if a, _ := e.store.GetAccount(bg, acct.ID); a.DeletedAt == nil {
		t.Fatal("not deleted")
	}
}

// TestBrowserPasskeysUnavailable: with an IP-address issuer the passkeys
// page says why in plain words; screenshots.
func TestBrowserPasskeysUnavailable(t *testing.T) {
	ctx := chromium.New(t)
	e := newEnv(t, envOpts{issuer: "http://127.0.0.1:8080"})
	must(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/login")), "open sign-in")
	e.client().signUp("ip.person@example.com", testPassword)
	typeInto(t, ctx, "Email", "ip.person@example.com")
	typeInto(t, ctx, "Password", testPassword)
	if st := press(t, ctx, "Sign in"); st != 200 {
		t.Fatalf("sign-in answered %d", st)
	}
	shootPage(t, ctx, e.base, chromium.ScreenshotDir(t), "passkeys-unavailable", "/account/passkeys", heading("Passkeys"))
	shootPage(t, ctx, e.base, chromium.ScreenshotDir(t), "account-passkeys-unavailable", "/account", heading("Your account"))
	if text := bodyText(t, ctx); !strings.Contains(text, "Passkeys are not available on this server: browsers only allow passkeys for a host name") {
		t.Errorf("page:\n%s", text)
	}
}
