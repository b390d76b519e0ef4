package consentui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/linkslot/linkslot/internal/identity"
)

// linkData is the model of the page a verification or reset link leads
// to, and of the pages after a resend.
type linkData struct {
	Title, Message string
	// Resend offers a new verification link (a signed-in, unverified person).
	Resend bool
	// NewResetLink offers the forgot-password form.
	NewResetLink bool
	Continue     string
	ContinueText string
}

func (u *UI) linkPage(w http.ResponseWriter, r *http.Request, status int, d linkData) {
	v := view{Title: d.Title, Data: d}
	if acct, ok := u.CurrentAccount(r); ok {
		v.Account = &acct
		v.CSRF = u.CSRFToken(w, r)
	}
	u.render(w, r, status, "link", v, nil)
}

// linkRefused reports whether err is a refused e-mail link (invalid,
// expired or used), which linkProblem words, rather than a failure.
func linkRefused(err error) bool {
	return errors.Is(err, identity.ErrLinkInvalid) || errors.Is(err, identity.ErrLinkExpired) || errors.Is(err, identity.ErrLinkUsed)
}

// linkProblem is what a refused link's page says.
func linkProblem(err error, what string) (status int, title, message string) {
	switch {
	case errors.Is(err, identity.ErrLinkExpired):
		return http.StatusGone, "This link has expired",
			"For your safety, " + what + " links only work for a while, and this one is too old. Nothing was changed."
	case errors.Is(err, identity.ErrLinkUsed):
		return http.StatusGone, "This link has been used already",
			"Each " + what + " link works once, and this one has been used. Nothing was changed."
	}
	return http.StatusBadRequest, "This link is not valid",
		"This " + what + " link is not one Linkslot sent, or it is incomplete: check that you copied all of it. Nothing was changed."
}

func (u *UI) getVerify(w http.ResponseWriter, r *http.Request) {
	acct, err := u.id.VerifyEmail(r.Context(), r.URL.Query().Get("token"))
	if err == nil {
		u.log.InfoContext(r.Context(), "consent-ui: e-mail verified", "account_id", acct.ID)
		d := linkData{Title: "Your e-mail address is confirmed",
			Message:  "Thank you: " + acct.Email + " is confirmed. You can now connect apps to your Linkslot account; if you were connecting one, go back to it and start again.",
			Continue: "/account", ContinueText: "Go to your account"}
		if _, ok := u.CurrentAccount(r); !ok {
			d.Continue, d.ContinueText = "/login", "Sign in"
		}
		u.linkPage(w, r, http.StatusOK, d)
		return
	}
	if !linkRefused(err) {
		u.serverError(w, r, err)
		return
	}
	status, title, msg := linkProblem(err, "confirmation")
	d := linkData{Title: title, Message: msg}
	cur, signedIn := u.CurrentAccount(r)
	switch {
	case signedIn && identity.EmailVerified(cur):
		d.Message += " Your address " + cur.Email + " is already confirmed, so there is nothing more to do."
		d.Continue, d.ContinueText = "/account", "Go to your account"
	case signedIn:
		d.Message += " Ask for a new link below; it goes to " + cur.Email + "."
		d.Resend = true
	default:
		d.Message += " Sign in, and Linkslot will offer to send you a new link."
		d.Continue, d.ContinueText = "/login?next=%2Faccount", "Sign in"
	}
	u.linkPage(w, r, status, d)
}

func (u *UI) postResendVerification(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.accountForm(w, r)
	if !ok {
		return
	}
	next, _ := nextParam(r)
	err := u.id.ResendVerification(r.Context(), acct.ID)
	d := linkData{Title: "Check your e-mail",
		Message: "We have sent a new confirmation link to " + acct.Email + ". It works once, for 24 hours; earlier links keep working until they expire."}
	status := http.StatusOK
	switch {
	case err == nil && identity.EmailVerified(acct):
		d.Title, d.Message = "Your address is confirmed", "Your address "+acct.Email+" is already confirmed."
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: verification link sent", "account_id", acct.ID)
	case errors.Is(err, identity.ErrTooManyMails):
		status = http.StatusTooManyRequests
		d.Title, d.Message = "Too many links", messageOf(err)
	case errors.Is(err, identity.ErrMailUnavailable):
		status = http.StatusServiceUnavailable
		d.Title, d.Message = "E-mail is not available", "Linkslot cannot send e-mail right now, so no link was sent. Please try again later."
	default:
		u.serverError(w, r, err)
		return
	}
	d.Continue, d.ContinueText = "/account", "Go to your account"
	if next != "" {
		d.Continue, d.ContinueText = next, "Back to the app's request"
	}
	u.linkPage(w, r, status, d)
}

type forgotData struct {
	Email string
	Sent  bool
}

func (u *UI) forgotPage(w http.ResponseWriter, r *http.Request, status int, d forgotData, errMsg string) {
	u.render(w, r, status, "forgot", view{Title: "Forgot your password?", Nav: "login", CSRF: u.CSRFToken(w, r), Error: errMsg, Data: d}, nil)
}

func (u *UI) getForgot(w http.ResponseWriter, r *http.Request) {
	u.forgotPage(w, r, http.StatusOK, forgotData{}, "")
}

func (u *UI) postForgot(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	if msg := controlCharError(r); msg != "" {
		u.forgotPage(w, r, http.StatusBadRequest, forgotData{}, msg)
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	err := u.id.RequestPasswordReset(r.Context(), email, u.clientAddr(r))
	wait, throttled := identity.RetryAfter(err)
	switch {
	case err == nil:
		// The same answer whether or not the address has an account.
		u.forgotPage(w, r, http.StatusOK, forgotData{Email: strings.ToLower(email), Sent: true}, "")
	case throttled:
		u.log.WarnContext(r.Context(), "consent-ui: password reset throttled", "client_addr", u.clientAddr(r))
		setThrottledRetryAfter(w, wait)
		u.forgotPage(w, r, http.StatusTooManyRequests, forgotData{Email: email},
			"Too many requests for a new password. For your safety, wait "+identity.HumanDuration(wait)+" and try again.")
	case errors.Is(err, identity.ErrInvalidEmail):
		u.forgotPage(w, r, http.StatusUnprocessableEntity, forgotData{Email: email}, messageOf(err))
	case errors.Is(err, identity.ErrMailUnavailable):
		u.forgotPage(w, r, http.StatusServiceUnavailable, forgotData{Email: email},
			"Linkslot cannot send e-mail right now, so no link was sent. Please try again later.")
	default:
		u.serverError(w, r, err)
	}
}

type resetData struct {
	Token     string
	MinLength int
}

func (u *UI) resetLinkRefused(w http.ResponseWriter, r *http.Request, err error) {
	status, title, msg := linkProblem(err, "password reset")
	u.linkPage(w, r, status, linkData{Title: title, Message: msg + " Ask for a new link; it is sent to the address you sign in with.", NewResetLink: true})
}

func (u *UI) getReset(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if err := u.id.CheckResetLink(r.Context(), tok); err != nil {
		if linkRefused(err) {
			u.resetLinkRefused(w, r, err)
			return
		}
		u.serverError(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "reset", view{Title: "Choose a new password", CSRF: u.CSRFToken(w, r),
		Data: resetData{Token: tok, MinLength: identity.MinPasswordLength}}, nil)
}

func (u *UI) postReset(w http.ResponseWriter, r *http.Request) {
	if !u.VerifyCSRF(r) {
		u.csrfFailed(w, r)
		return
	}
	tok := r.PostFormValue("token")
	again := func(status int, msg string) {
		u.render(w, r, status, "reset", view{Title: "Choose a new password", CSRF: u.CSRFToken(w, r), Error: msg,
			Data: resetData{Token: tok, MinLength: identity.MinPasswordLength}}, nil)
	}
	if msg := controlCharError(r); msg != "" {
		again(http.StatusBadRequest, msg)
		return
	}
	pw := r.PostFormValue("new_password")
	if pw != r.PostFormValue("new_password_repeat") {
		again(http.StatusUnprocessableEntity, "The two new passwords are not the same. Type them again.")
		return
	}
	acct, err := u.id.ResetPassword(r.Context(), tok, pw, u.clientAddr(r))
	switch {
	case err == nil:
		u.log.InfoContext(r.Context(), "consent-ui: password reset", "account_id", acct.ID)
		u.clearCookie(w, u.sessionCookie)
		// A fresh anonymous CSRF cookie for the sign-in form below.
		r.Header.Del("Cookie")
		u.loginPage(w, r, http.StatusOK, acct.Email, "",
			"Your password has been changed, and every browser signed in to your account has been signed out. Sign in with the new password.", "")
	case errors.Is(err, identity.ErrWeakPassword):
		again(http.StatusUnprocessableEntity, messageOf(err))
	case errors.Is(err, identity.ErrBusy):
		u.busy(w, r)
		again(http.StatusServiceUnavailable, msgBusy)
	case linkRefused(err):
		u.resetLinkRefused(w, r, err)
	default:
		u.serverError(w, r, err)
	}
}
