package consentui

import (
	"errors"
	"net/http"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store"
)

// The account pages: the account, its calendar feed and its password.

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
