package consentui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
)

// Sign-in and sign-out: the signed-in session, the sign-in page and its return address (next).

// CurrentAccount returns the signed-in account.
func (u *UI) CurrentAccount(r *http.Request) (store.Account, bool) {
	acct, _, err := u.session(r)
	return acct, err == nil
}

// CurrentSignIn returns the signed-in account and when the person signed
// in (consent.AuthorizeUI).
func (u *UI) CurrentSignIn(r *http.Request) (consent.SignIn, bool) {
	acct, s, err := u.session(r)
	return consent.SignIn{Account: acct, AuthTime: s.AuthTime}, err == nil
}

func (u *UI) session(r *http.Request) (store.Account, identity.Session, error) {
	tok := cookieValue(r, u.sessionCookie)
	if tok == "" {
		return store.Account{}, identity.Session{}, identity.ErrNoSession
	}
	acct, s, err := u.id.LookupSession(r.Context(), tok)
	if err != nil && !errors.Is(err, identity.ErrNoSession) {
		u.log.ErrorContext(r.Context(), "consent-ui: session lookup", "err", err)
	}
	return acct, s, err
}

// LoginRedirect sends the browser to the sign-in page, then back to next
// when it is a same-origin path.
func (u *UI) LoginRedirect(w http.ResponseWriter, r *http.Request, next string) {
	target := "/login"
	if SafeNext(next) {
		target += "?next=" + url.QueryEscape(next)
	}
	setSecurityHeaders(w, nil)
	noStore(w)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// ReauthRedirect sends the browser to the sign-in page, which asks for the
// password (or a passkey) even when someone is signed in, then back to
// next when it is a same-origin path.
func (u *UI) ReauthRedirect(w http.ResponseWriter, r *http.Request, next string) {
	target := "/login?" + paramReauth + "=1"
	if SafeNext(next) {
		target += "&next=" + url.QueryEscape(next)
	}
	setSecurityHeaders(w, nil)
	noStore(w)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// paramReauth on the sign-in page shows the form to a signed-in person
// too: the app they are connecting asked for a fresh sign-in.
const paramReauth = "reauth"

// msgReauth is the sign-in page's notice to a signed-in person asked to
// sign in again.
const msgReauth = "The app you are connecting asks you to sign in again, to be sure it is you. " +
	"Enter your password, or use your passkey, to continue."

type loginData struct {
	Email     string
	Next      string
	SignUpURL string
	Passkey   *ceremonyView // "Sign in with a passkey", when available
	DevMail   string        // after a sign-up in development: the development mailbox
}

func withNext(path, next string) string {
	if next == "" {
		return path
	}
	return path + "?next=" + url.QueryEscape(next)
}

// nextParam returns the request's next, and a notice when one was given
// but refused.
func nextParam(r *http.Request) (string, string) {
	n := r.FormValue("next")
	if n == "" {
		return "", ""
	}
	if !SafeNext(n) {
		return "", "The link that brought you here pointed outside Linkslot, so it was ignored. " +
			"After signing in you will see your account. If you were connecting an app, start again from the app."
	}
	return n, ""
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request, status int, email, next, notice, errMsg string) {
	// A sign-in refused because the hashing slots are busy (503) or the
	// network is throttled (429) writes nothing, not even the passkey
	// ceremony a page with the passkey button stores: in a burst of
	// sign-ins those pages are most of the answers. The page asks the
	// person to try again in a moment, and the sign-in page they come
	// back to offers the passkey again.
	var pk *ceremonyView
	if status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests {
		pk = u.loginCeremony(r)
	}
	u.render(w, r, status, "login", view{Title: "Sign in", Nav: "login", CSRF: u.CSRFToken(w, r), Notice: notice, Error: errMsg,
		Data: loginData{Email: email, Next: next, SignUpURL: withNext("/signup", next), Passkey: pk, DevMail: u.devMailAfter(notice)}}, formTargetsForNext(next))
}

// devMailAfter is the development mailbox's URL on the sign-in page shown
// after a sign-up (its notice is identity.SignUpNotice), in development
// where the confirmation e-mail is written there; "" otherwise.
func (u *UI) devMailAfter(notice string) string {
	if notice != identity.SignUpNotice {
		return ""
	}
	return u.devMail
}

func (u *UI) getLogin(w http.ResponseWriter, r *http.Request) {
	next, notice := nextParam(r)
	email := ""
	if acct, ok := u.CurrentAccount(r); ok && notice == "" {
		if r.URL.Query().Get(paramReauth) != "1" {
			u.redirect(w, r, next)
			return
		}
		// Asked to sign in again: the form, filled in with the account.
		email, notice = acct.Email, msgReauth
	}
	if notice == "" && r.URL.Query().Get("signed_out") == "1" {
		notice = "You have signed out."
	}
	u.loginPage(w, r, http.StatusOK, email, next, notice, "")
}

func (u *UI) postLogin(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	next, notice := nextParam(r)
	if msg := controlCharError(r); msg != "" {
		u.loginPage(w, r, http.StatusBadRequest, "", "", notice, msg)
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	acct, err := u.id.Authenticate(r.Context(), email, r.PostFormValue("password"), u.clientAddr(r))
	if err != nil {
		wait, throttled := identity.RetryAfter(err)
		switch {
		case throttled:
			u.log.WarnContext(r.Context(), "consent-ui: sign-in throttled", "client_addr", u.clientAddr(r))
			setThrottledRetryAfter(w, wait)
			u.loginPage(w, r, http.StatusTooManyRequests, email, next, notice,
				"Too many failed sign-in attempts. For your safety, wait "+identity.HumanDuration(wait)+
					" and try again. Your account is not locked: the right password will work after the wait.")
		case errors.Is(err, identity.ErrBusy):
			u.busy(w, r)
			u.loginPage(w, r, http.StatusServiceUnavailable, email, next, notice, msgBusy)
		case errors.Is(err, identity.ErrInvalidCredentials), errors.Is(err, identity.ErrAccountDisabled):
			u.log.InfoContext(r.Context(), "consent-ui: sign-in refused", "client_addr", u.clientAddr(r))
			u.loginPage(w, r, http.StatusUnauthorized, email, next, notice, messageOf(err))
		default:
			u.serverError(w, r, err)
		}
		return
	}
	u.startSession(w, r, acct, next, "password")
}

// startSession signs acct in (with method: password or passkey) and
// sends the browser on to next.
func (u *UI) startSession(w http.ResponseWriter, r *http.Request, acct store.Account, next, method string) {
	// Rotate: the previous session of this browser ends, a new one begins.
	if old := cookieValue(r, u.sessionCookie); old != "" {
		if err := u.id.DeleteSession(r.Context(), old); err != nil {
			u.serverError(w, r, err)
			return
		}
	}
	s, err := u.id.CreateSession(r.Context(), acct.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.setCookie(w, u.sessionCookie, s.Token, s.ExpiresAt)
	u.log.InfoContext(r.Context(), "consent-ui: signed in", "account_id", acct.ID, "method", method)
	u.redirect(w, r, next)
}

func (u *UI) getLogout(w http.ResponseWriter, r *http.Request) {
	next, _ := nextParam(r)
	acct, ok := u.CurrentAccount(r)
	if !ok {
		u.redirect(w, r, withNext("/login", next))
		return
	}
	u.render(w, r, http.StatusOK, "logout", view{Title: "Sign out", Account: &acct, CSRF: u.CSRFToken(w, r),
		Data: struct{ Next string }{next}}, nil)
}

func (u *UI) postLogout(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	next, _ := nextParam(r)
	if err := u.id.DeleteSession(r.Context(), cookieValue(r, u.sessionCookie)); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.clearCookie(w, u.sessionCookie)
	notice := "/login?signed_out=1"
	if next != "" {
		notice += "&next=" + url.QueryEscape(next)
	}
	u.redirect(w, r, notice)
}
