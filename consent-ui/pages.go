package consentui

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/problem"
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

func (u *UI) redirect(w http.ResponseWriter, r *http.Request, next string) {
	if !SafeNext(next) {
		next = "/account"
	}
	setSecurityHeaders(w, nil)
	noStore(w)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

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
