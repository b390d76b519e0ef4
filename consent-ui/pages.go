package consentui

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// view is what every template receives.
type view struct {
	Title   string
	Nav     string // the current section, for aria-current
	Account *store.Account
	CSRF    string
	Field   string // consent.CSRFField
	Notice  string
	Error   string
	Data    any
}

// render writes a page with the security headers; formTargets are the
// extra form-action sources (nil: 'self' only).
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, page string, v view, formTargets []string) {
	t, ok := u.pages[page]
	if !ok {
		u.log.ErrorContext(r.Context(), "consent-ui: unknown page", "page", page)
		page, t = "error", u.pages["error"]
		status = http.StatusInternalServerError
		v = view{Title: "Something went wrong", Data: errorData{Title: "Something went wrong", Message: msgServerError}}
	}
	v.Field = consent.CSRFField
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		u.log.ErrorContext(r.Context(), "consent-ui: render", "page", page, "err", err)
		setSecurityHeaders(w, nil)
		noStore(w)
		http.Error(w, "Something went wrong. Please try again.", http.StatusInternalServerError)
		return
	}
	setSecurityHeaders(w, formTargets)
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

const msgServerError = "Linkslot could not finish this request. Nothing was changed. Please try again in a moment."

type errorData struct {
	Title, Message string
	StartAgain     bool
}

// RenderError shows a fixed, safe error page.
func (u *UI) RenderError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	acct, _ := u.CurrentAccount(r)
	v := view{Title: title, Data: errorData{Title: title, Message: message}}
	if acct.ID != "" {
		v.Account = &acct
	}
	u.render(w, r, status, "error", v, nil)
}

// redirectData is the page of a refused redirect address.
type redirectData struct {
	consent.RedirectRefusal
	LoopbackRule string
}

// RenderRedirectRefusal shows the page of a refused redirect address
// (part of consent.AuthorizeUI): the address refused and, when the client's
// are public, the addresses allowed.
func (u *UI) RenderRedirectRefusal(w http.ResponseWriter, r *http.Request, status int, rr consent.RedirectRefusal) {
	acct, _ := u.CurrentAccount(r)
	v := view{Title: rr.Title(), Data: redirectData{RedirectRefusal: rr, LoopbackRule: consent.LoopbackRule}}
	if acct.ID != "" {
		v.Account = &acct
	}
	u.render(w, r, status, "redirect_error", v, nil)
}

func (u *UI) serverError(w http.ResponseWriter, r *http.Request, err error) {
	u.log.ErrorContext(r.Context(), "consent-ui: request failed", "path", r.URL.Path, "err", err)
	u.RenderError(w, r, http.StatusInternalServerError, "Something went wrong", msgServerError)
}

// csrfFailed answers a POST without a valid token.
func (u *UI) csrfFailed(w http.ResponseWriter, r *http.Request) {
	u.log.WarnContext(r.Context(), "consent-ui: CSRF token missing or wrong", "path", r.URL.Path)
	u.render(w, r, http.StatusForbidden, "error", view{Title: "This form has expired",
		Data: errorData{Title: "This form has expired",
			Message: "For your safety, a Linkslot form only works for a while and only from the page that showed it, " +
				"and this one could not be verified. Nothing was changed. Go back, reload the page and try again. " +
				"If you were connecting an app, start again from the app.",
			StartAgain: true}}, nil)
}

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

// consentData is the consent page's model.
type consentData struct {
	consent.ConsentView
	Hidden      []hiddenField
	SignOutNext string
}

type hiddenField struct{ Name, Value string }

// RenderConsent shows the consent page.
func (u *UI) RenderConsent(w http.ResponseWriter, r *http.Request, cv consent.ConsentView) {
	d := consentData{ConsentView: cv}
	keys := make([]string, 0, len(cv.Params))
	for k := range cv.Params {
		if k != consent.CSRFField && k != "decision" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range cv.Params[k] {
			d.Hidden = append(d.Hidden, hiddenField{k, v})
		}
	}
	if cv.CSRFToken == "" {
		d.CSRFToken = u.CSRFToken(w, r)
	}
	if SafeNext(cv.Action) {
		n := cv.Action
		if len(cv.Params) > 0 {
			n += "?" + cv.Params.Encode()
		}
		if SafeNext(n) {
			d.SignOutNext = n
		}
	}
	v := view{Title: "Connect " + cv.ClientName, CSRF: d.CSRFToken, Data: d}
	if acct, ok := u.CurrentAccount(r); ok {
		v.Account = &acct
	}
	u.render(w, r, http.StatusOK, "consent", v, formTargetsFor(cv.Params.Get("redirect_uri")))
}

// --- sign-in, sign-up, sign-out ---

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

func (u *UI) redirect(w http.ResponseWriter, r *http.Request, next string) {
	if !SafeNext(next) {
		next = "/account"
	}
	setSecurityHeaders(w, nil)
	noStore(w)
	http.Redirect(w, r, next, http.StatusSeeOther)
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

type signUpData struct {
	Email     string
	Next      string
	LoginURL  string
	MinLength int
}

func (u *UI) signUpPage(w http.ResponseWriter, r *http.Request, status int, email, next, notice, errMsg string) {
	u.render(w, r, status, "signup", view{Title: "Create your account", Nav: "signup", CSRF: u.CSRFToken(w, r),
		Notice: notice, Error: errMsg,
		Data: signUpData{Email: email, Next: next, LoginURL: withNext("/login", next), MinLength: identity.MinPasswordLength}}, nil)
}

func (u *UI) getSignUp(w http.ResponseWriter, r *http.Request) {
	next, notice := nextParam(r)
	u.signUpPage(w, r, http.StatusOK, "", next, notice, "")
}

func (u *UI) postSignUp(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	next, _ := nextParam(r)
	if msg := controlCharError(r); msg != "" {
		u.signUpPage(w, r, http.StatusBadRequest, "", "", "", msg)
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password_repeat") {
		u.signUpPage(w, r, http.StatusUnprocessableEntity, email, next, "", "The two passwords are not the same. Type them again.")
		return
	}
	_, err := u.id.SignUp(r.Context(), email, pw)
	switch {
	case err == nil, errors.Is(err, identity.ErrEmailUnavailable):
		// The same answer either way: the page must not reveal whether
		// the address already had an account.
		u.loginPage(w, r, http.StatusOK, strings.ToLower(email), next, identity.SignUpNotice, "")
	case errors.Is(err, identity.ErrBusy):
		u.busy(w, r)
		u.signUpPage(w, r, http.StatusServiceUnavailable, email, next, "", msgBusy)
	case errors.Is(err, identity.ErrMailUnavailable):
		u.signUpPage(w, r, http.StatusServiceUnavailable, email, next, "", msgSignUpMailOff)
	case errors.Is(err, identity.ErrInvalidEmail):
		u.signUpPage(w, r, http.StatusUnprocessableEntity, email, next, "", messageOf(err))
	case errors.Is(err, identity.ErrWeakPassword):
		u.signUpPage(w, r, http.StatusUnprocessableEntity, email, next, "", messageOf(err))
	default:
		u.serverError(w, r, err)
	}
}

// msgSignUpMailOff is what the sign-up page says on a server with e-mail
// switched off (LINKSLOT_SMTP_URL=off), where no address can be confirmed.
const msgSignUpMailOff = "This Linkslot server cannot send e-mail, so a new account could not confirm its address. " +
	"Nothing was created. Ask the server's administrator to create your account."

// msgBusy is what a sign-in or sign-up page says when every
// password-hashing slot stayed busy (identity.ErrBusy).
const msgBusy = "Many people are signing in right now, so Linkslot could not check your password. " +
	"Nothing was changed. Try again in a moment."

// busyRetryAfter is the Retry-After of a 503 for busy hashing slots: one
// admission wait, by when most of the crowd ahead has been served.
const busyRetryAfter = "2"

// busy logs a refusal for busy hashing slots and sets Retry-After.
func (u *UI) busy(w http.ResponseWriter, r *http.Request) {
	u.log.WarnContext(r.Context(), "consent-ui: password hashing slots busy", "path", r.URL.Path, "client_addr", u.clientAddr(r))
	w.Header().Set("Retry-After", busyRetryAfter)
}

// setThrottledRetryAfter sets the Retry-After of a 429 for a throttled
// attempt: its wait in whole seconds, rounded up.
func setThrottledRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
}

// messageOf is the sentence an identity or passkey error carries for the
// person (internal/problem), shown as it is.
func messageOf(err error) string {
	if e, ok := problem.As(err); ok {
		return e.Message
	}
	return ""
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

// --- account pages ---

// requireAccount returns the signed-in account or sends the browser to
// sign in and back.
func (u *UI) requireAccount(w http.ResponseWriter, r *http.Request) (store.Account, identity.Session, bool) {
	acct, s, err := u.session(r)
	if err != nil {
		if r.Method == http.MethodGet {
			u.LoginRedirect(w, r, r.URL.RequestURI())
		} else {
			u.LoginRedirect(w, r, r.URL.Path)
		}
		return store.Account{}, identity.Session{}, false
	}
	return acct, s, true
}

// accountForm checks a signed-in person's form: the CSRF token first,
// then the session (or the sign-in page).
func (u *UI) accountForm(w http.ResponseWriter, r *http.Request) (store.Account, identity.Session, bool) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return store.Account{}, identity.Session{}, false
	}
	return u.requireAccount(w, r)
}

func (u *UI) getAccount(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	v := view{Title: "Your account", Nav: "account", Account: &acct, CSRF: u.CSRFToken(w, r)}
	switch {
	case r.URL.Query().Get("password_changed") == "1":
		v.Notice = "Your password has been changed. Every other browser signed in to your account has been signed out."
	case r.URL.Query().Get("calendar") != "":
		v.Notice = calendarNotices[r.URL.Query().Get("calendar")]
	}
	d := accountData{PasskeysUnavailable: u.pk.UnavailableReason()}
	if u.feeds != nil {
		url, err := u.feeds.Account(r.Context(), acct.ID)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		d.Feeds, d.FeedURL = true, url
	}
	v.Data = d
	u.render(w, r, http.StatusOK, "account", v, nil)
}

// accountData is the account page's calendar feed section.
type accountData struct {
	Feeds   bool   // calendar feeds are available
	FeedURL string // the person's private feed, "" when off
	// PasskeysUnavailable says why passkeys do not work on this server
	// ("" when they do).
	PasskeysUnavailable string
}

var calendarNotices = map[string]string{
	"on":       "Your calendar feed is on. Add its address to your calendar app as a subscription.",
	"replaced": "Your calendar feed has a new address; the old one no longer works.",
	"off":      "Your calendar feed is off; its address no longer works.",
}

// postCalendar turns the person's private calendar feed on, replaces its
// address, or turns it off (docs/reference.md §11).
func (u *UI) postCalendar(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	if u.feeds == nil {
		u.RenderError(w, r, http.StatusNotFound, "Not available", "Calendar feeds are not available on this server.")
		return
	}
	var err error
	done := ""
	switch r.PostFormValue("action") {
	case "on":
		done = "on"
		_, err = u.feeds.NewAccountFeed(r.Context(), acct.ID)
	case "replace":
		done = "replaced"
		_, err = u.feeds.NewAccountFeed(r.Context(), acct.ID)
	case "off":
		done = "off"
		err = u.feeds.TurnOffAccount(r.Context(), acct.ID)
	default:
		u.RenderError(w, r, http.StatusBadRequest, "Not possible", "The form did not say what to do with the calendar feed.")
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirect(w, r, "/account?calendar="+done)
}

func (u *UI) passwordPage(w http.ResponseWriter, r *http.Request, status int, acct store.Account, errMsg string) {
	u.render(w, r, status, "password", view{Title: "Change password", Nav: "account", Account: &acct,
		CSRF: u.CSRFToken(w, r), Error: errMsg, Data: struct{ MinLength int }{identity.MinPasswordLength}}, nil)
}

func (u *UI) getPassword(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	u.passwordPage(w, r, http.StatusOK, acct, "")
}

func (u *UI) postPassword(w http.ResponseWriter, r *http.Request) {
	acct, s, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	nw := r.PostFormValue("new_password")
	if nw != r.PostFormValue("new_password_repeat") {
		u.passwordPage(w, r, http.StatusUnprocessableEntity, acct, "The two new passwords are not the same. Type them again.")
		return
	}
	err := u.id.ChangePassword(r.Context(), acct.ID, r.PostFormValue("current_password"), nw, s.Token, u.clientAddr(r))
	wait, throttled := identity.RetryAfter(err)
	switch {
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: password changed", "account_id", acct.ID)
		u.redirect(w, r, "/account?password_changed=1")
	case throttled:
		setThrottledRetryAfter(w, wait)
		u.passwordPage(w, r, http.StatusTooManyRequests, acct,
			"Too many wrong passwords. Wait "+identity.HumanDuration(wait)+" and try again.")
	case errors.Is(err, identity.ErrWrongPassword), errors.Is(err, identity.ErrWeakPassword):
		u.passwordPage(w, r, http.StatusUnprocessableEntity, acct, messageOf(err))
	default:
		u.serverError(w, r, err)
	}
}

type connection struct {
	ID         string
	ClientName string
	Scopes     []scope.Scope
	Link       store.Link
}

func (u *UI) clientName(ctx context.Context, cache map[string]string, id string) string {
	if id == "" {
		return "An app"
	}
	if n, ok := cache[id]; ok {
		return n
	}
	n := "An app that was removed"
	if c, err := u.store.GetClient(ctx, id); err == nil {
		n = c.Name
		if n == "" {
			n = c.ID
		}
	}
	cache[id] = n
	return n
}

func (u *UI) getConnections(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	links, err := u.id.Connections(r.Context(), acct.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[string]string{}
	var conns []connection
	for _, l := range links {
		conns = append(conns, connection{ID: l.ID, ClientName: u.clientName(r.Context(), names, l.ClientID),
			Scopes: describeScopes(l.Scopes), Link: l})
	}
	v := view{Title: "Connected apps", Nav: "connections", Account: &acct, CSRF: u.CSRFToken(w, r), Data: conns}
	switch r.URL.Query().Get("disconnected") {
	case "1":
		v.Notice = "The app was disconnected. It can no longer see or change your bookings; to use it again, connect it again from the app."
	case "0":
		v.Error = "That connection was not found. It may already have been disconnected."
	}
	u.render(w, r, http.StatusOK, "connections", v, nil)
}

func (u *UI) postDisconnect(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	if msg := controlCharError(r); msg != "" {
		u.RenderError(w, r, http.StatusBadRequest, "Nothing was disconnected", msg)
		return
	}
	err := u.id.Disconnect(r.Context(), acct.ID, r.PostFormValue("link_id"))
	switch {
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: link disconnected", "account_id", acct.ID, "link_id", r.PostFormValue("link_id"))
		u.redirect(w, r, "/account/connections?disconnected=1")
	case errors.Is(err, identity.ErrNotFound):
		u.RenderError(w, r, http.StatusNotFound, "Connection not found",
			"That connection was not found. It may already have been disconnected. Your connected apps are listed under Connected apps.")
	default:
		u.serverError(w, r, err)
	}
}

type activityEntry struct {
	store.Activity
	ClientName string
}

type activityData struct {
	Entries []activityEntry
	Page    int
	HasMore bool
	PrevURL string
	NextURL string
}

func (u *UI) getActivity(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	p, err := u.id.Activity(r.Context(), acct.ID, page, u.perPage)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[string]string{}
	d := activityData{Page: p.Page, HasMore: p.HasMore}
	for _, a := range p.Entries {
		d.Entries = append(d.Entries, activityEntry{Activity: a, ClientName: u.clientName(r.Context(), names, a.ClientID)})
	}
	if p.Page > 1 {
		d.PrevURL = "/account/activity?page=" + strconv.Itoa(p.Page-1)
	}
	if p.HasMore {
		d.NextURL = "/account/activity?page=" + strconv.Itoa(p.Page+1)
	}
	u.render(w, r, http.StatusOK, "activity", view{Title: "Activity", Nav: "activity", Account: &acct, CSRF: u.CSRFToken(w, r), Data: d}, nil)
}

// describeScopes returns the scopes in vocabulary order with their plain
// descriptions.
func describeScopes(names []string) []scope.Scope {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	var out []scope.Scope
	for _, n := range scope.Ordered(set) {
		out = append(out, scopeText(n))
	}
	return out
}

func scopeText(name string) scope.Scope {
	if s, ok := scope.Lookup(name); ok {
		return s
	}
	return scope.Scope{Name: name, Description: "Use the permission “" + name + "”"}
}

// toolWords names an Activity entry's operation; a web caller's carry the
// prefix "web:" (internal/mutation) and read the same.
func toolWords(tool string) string {
	switch strings.TrimPrefix(tool, "web:") {
	case "create_my_booking":
		return "Booked an appointment"
	case "reschedule_my_booking":
		return "Moved an appointment"
	case "cancel_my_booking":
		return "Cancelled an appointment"
	}
	return strings.ReplaceAll(tool, "_", " ")
}
