package consentui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/store"
)

// Passkeys (docs/reference.md §12). Each page that offers a passkey ceremony
// carries its options in a data-options attribute of a form that is
// hidden until /static/passkey.js shows it: the script calls
// navigator.credentials.create or .get, puts the JSON answer in the form's
// "credential" field and submits the form like any other, with its CSRF
// token and the ceremony handle. No request is made from script, so the
// CSP loosens nothing but script-src 'self'. Without JavaScript the forms
// stay hidden and password sign-in works as before.

// ceremonyView is a started ceremony as a page carries it.
type ceremonyView struct {
	Handle  string
	Options string // JSON for the script
}

func viewOf(c passkey.Ceremony) *ceremonyView {
	return &ceremonyView{Handle: c.Handle, Options: c.Options}
}

type passkeysData struct {
	Unavailable string // why passkeys do not work here, when they do not
	Passkeys    []store.Passkey
	Add         *ceremonyView // nil: adding is not offered
	TooMany     bool
	Max         int
	NameMax     int    // passkey.MaxNameLength
	Name        string // the name typed, when the page comes back with an error
}

var passkeyNotices = map[string]string{
	"added":   "Your passkey was added. Next time, choose “Sign in with a passkey” on the sign-in page.",
	"renamed": "The passkey was renamed.",
	"removed": "The passkey was removed. It can no longer be used to sign in to your account.",
}

func (u *UI) passkeysPage(w http.ResponseWriter, r *http.Request, status int, acct store.Account, notice, errMsg, name string) {
	d := passkeysData{Unavailable: u.pk.UnavailableReason(), Max: passkey.MaxPerAccount, NameMax: passkey.MaxNameLength, Name: name}
	ps, err := u.pk.List(r.Context(), acct.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	d.Passkeys = ps
	if u.pk.Available() {
		c, err := u.pk.BeginRegistrationWith(r.Context(), acct, ps)
		switch {
		case err == nil:
			d.Add = viewOf(c)
		case errors.Is(err, passkey.ErrTooMany):
			d.TooMany = true
		default:
			u.serverError(w, r, err)
			return
		}
	}
	u.render(w, r, status, "passkeys", view{Title: "Passkeys", Nav: "account", Account: &acct, CSRF: u.CSRFToken(w, r),
		Notice: notice, Error: errMsg, Data: d}, nil)
}

func (u *UI) getPasskeys(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	u.passkeysPage(w, r, http.StatusOK, acct, passkeyNotices[r.URL.Query().Get("done")], "", "")
}

// passkeyRefusal maps a refused ceremony to a status and a message that
// starts with what did not happen (what, e.g. "No passkey was added").
func passkeyRefusal(err error, what string) (int, string, bool) {
	switch {
	case errors.Is(err, passkey.ErrMalformed):
		return http.StatusBadRequest, what + ": the browser's answer could not be read. Try again.", true
	case errors.Is(err, passkey.ErrCeremony):
		return http.StatusUnprocessableEntity, what + ": the page was open for too long or was used already. Try again.", true
	case errors.Is(err, passkey.ErrNotVerified):
		return http.StatusUnprocessableEntity, what + ": the passkey could not be verified. Try again.", true
	case errors.Is(err, passkey.ErrUnavailable):
		return http.StatusNotFound, what + ": passkeys are not available on this server.", true
	}
	for _, e := range []error{passkey.ErrUnknownPasskey, passkey.ErrPossibleClone, passkey.ErrAlreadyRegistered,
		passkey.ErrInvalidName, passkey.ErrTooMany} {
		if errors.Is(err, e) {
			return http.StatusUnprocessableEntity, what + ": " + clause(e), true
		}
	}
	return 0, "", false
}

// clause is a passkey error's message (a clause) as the end of a
// sentence.
func clause(err error) string { return strings.TrimSuffix(messageOf(err), ".") + "." }

func (u *UI) postPasskeyAdd(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	name := r.PostFormValue("name")
	p, err := u.pk.FinishRegistration(r.Context(), acct, r.PostFormValue("ceremony"), name, []byte(r.PostFormValue("credential")))
	if err != nil {
		status, msg, known := passkeyRefusal(err, "No passkey was added")
		if !known {
			u.serverError(w, r, err)
			return
		}
		u.log.InfoContext(r.Context(), "consent-ui: passkey not added", "account_id", acct.ID, "err", err)
		u.passkeysPage(w, r, status, acct, "", msg, name)
		return
	}
	u.log.InfoContext(r.Context(), "consent-ui: passkey added", "account_id", acct.ID, "passkey_id", p.ID)
	u.redirect(w, r, "/account/passkeys?done=added")
}

func (u *UI) postPasskeyRename(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	_, err := u.pk.Rename(r.Context(), acct.ID, r.PostFormValue("passkey_id"), r.PostFormValue("name"))
	switch {
	case err == nil:
		u.redirect(w, r, "/account/passkeys?done=renamed")
	case errors.Is(err, passkey.ErrInvalidName):
		u.passkeysPage(w, r, http.StatusUnprocessableEntity, acct, "", "The passkey was not renamed: "+clause(passkey.ErrInvalidName), "")
	case errors.Is(err, passkey.ErrNotFound):
		u.RenderError(w, r, http.StatusNotFound, "Passkey not found", "That passkey was not found. It may have been removed already. Your passkeys are listed under Passkeys.")
	default:
		u.serverError(w, r, err)
	}
}

func (u *UI) postPasskeyRemove(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	id := r.PostFormValue("passkey_id")
	err := u.pk.Remove(r.Context(), acct.ID, id)
	switch {
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: passkey removed", "account_id", acct.ID, "passkey_id", id)
		u.redirect(w, r, "/account/passkeys?done=removed")
	case errors.Is(err, passkey.ErrNotFound):
		u.RenderError(w, r, http.StatusNotFound, "Passkey not found", "That passkey was not found. It may have been removed already. Your passkeys are listed under Passkeys.")
	default:
		u.serverError(w, r, err)
	}
}

// loginCeremony starts the sign-in page's passkey ceremony; nil (no
// button) when passkeys are unavailable or the ceremony cannot be stored,
// which must not stop password sign-in.
func (u *UI) loginCeremony(r *http.Request) *ceremonyView {
	if !u.pk.Available() {
		return nil
	}
	c, err := u.pk.BeginLogin(r.Context())
	if err != nil {
		u.log.ErrorContext(r.Context(), "consent-ui: start passkey sign-in", "err", err)
		return nil
	}
	return viewOf(c)
}

// postLoginPasskey finishes "Sign in with a passkey" and starts the same
// session a password sign-in does.
func (u *UI) postLoginPasskey(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	next, notice := nextParam(r)
	acct, err := u.pk.FinishLogin(r.Context(), r.PostFormValue("ceremony"), []byte(r.PostFormValue("credential")), u.clientAddr(r))
	if err != nil {
		const what = "You are not signed in"
		wait, throttled := identity.RetryAfter(err)
		status, msg, known := passkeyRefusal(err, what)
		switch {
		case known:
		case throttled:
			setThrottledRetryAfter(w, wait)
			status, msg = http.StatusTooManyRequests, "Too many failed sign-in attempts from your network. For your safety, wait "+
				identity.HumanDuration(wait)+" and try again."
		case errors.Is(err, identity.ErrAccountDisabled):
			status, msg = http.StatusUnauthorized, messageOf(err)
		default:
			u.serverError(w, r, err)
			return
		}
		u.log.InfoContext(r.Context(), "consent-ui: passkey sign-in refused", "client_addr", u.clientAddr(r), "err", err)
		u.loginPage(w, r, status, "", next, notice, msg)
		return
	}
	u.startSession(w, r, acct, next, "passkey")
}

// passkeyConfirms checks the passkey a person confirmed a deletion with;
// on refusal it shows the delete page again and answers false.
func (u *UI) passkeyConfirms(w http.ResponseWriter, r *http.Request, acct store.Account) bool {
	err := u.pk.FinishReauth(r.Context(), acct, r.PostFormValue("ceremony"), []byte(r.PostFormValue("credential")), u.clientAddr(r))
	if err == nil {
		return true
	}
	wait, throttled := identity.RetryAfter(err)
	status, msg, known := passkeyRefusal(err, "Nothing was deleted")
	switch {
	case known:
	case throttled:
		setThrottledRetryAfter(w, wait)
		status, msg = http.StatusTooManyRequests, "Nothing was deleted. Too many failed attempts: wait "+identity.HumanDuration(wait)+" and try again."
	default:
		u.serverError(w, r, err)
		return false
	}
	u.log.InfoContext(r.Context(), "consent-ui: passkey confirmation refused", "account_id", acct.ID, "err", err)
	u.deletePage(w, r, status, acct, msg)
	return false
}

// deleteCeremony starts the delete page's "confirm with a passkey"
// ceremony, when the account has a passkey.
func (u *UI) deleteCeremony(r *http.Request, acct store.Account) (*ceremonyView, error) {
	if !u.pk.Available() {
		return nil, nil
	}
	c, err := u.pk.BeginReauth(r.Context(), acct)
	if errors.Is(err, passkey.ErrNoPasskeys) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return viewOf(c), nil
}
