package consentui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/linkslot/linkslot/internal/identity"
)

// The sign-up page.

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
