package endpoint

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/internal/store"
)

// oauthError is an error as the client sees it.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	Status      int    `json:"-"`
}

var (
	errServer         = oauthError{"server_error", "The authorization server could not complete the request.", http.StatusInternalServerError}
	errUnavailable    = oauthError{"temporarily_unavailable", "The authorization server is temporarily unavailable; retry shortly.", http.StatusServiceUnavailable}
	errInvalidTarget  = oauthError{"invalid_target", "The requested resource is not a resource this server issues tokens for.", http.StatusBadRequest}
	errAccessDenied   = oauthError{"access_denied", "The person declined the request.", http.StatusForbidden}
	errInvalidToken   = oauthError{"invalid_token", "The access token is invalid, expired or revoked.", http.StatusUnauthorized}
	errPublicIntrospt = oauthError{"invalid_client", "Introspection is available to confidential clients only.", http.StatusUnauthorized}
)

// errLoginRequired answers prompt=none when a sign-in would be needed
// (OpenID Connect Core §3.1.2.6).
func errLoginRequired(desc string) oauthError {
	return oauthError{"login_required", desc, http.StatusBadRequest}
}

func errPKCE(desc string) oauthError {
	return oauthError{"invalid_request", desc, http.StatusBadRequest}
}

// classify turns any error into what the client may see; unknown and
// server errors are logged by the caller and become server_error.
func classify(err error) (e oauthError, internal bool) {
	if errors.Is(err, store.ErrConflict) {
		// A concurrent redemption or rotation won the race.
		return oauthError{"invalid_grant", "The authorization grant was already used.", http.StatusBadRequest}, false
	}
	if errors.Is(err, store.ErrUnavailable) {
		return errUnavailable, true
	}
	var rfc *fosite.RFC6749Error
	if !errors.As(err, &rfc) {
		return errServer, true
	}
	if rfc.ErrorField == "server_error" || rfc.CodeField >= 500 || rfc.CodeField == 0 {
		return errServer, true
	}
	return oauthError{Code: rfc.ErrorField, Description: rfc.GetDescription(), Status: rfc.CodeField}, false
}

// safeErr describes an error for the log without its debug details.
func safeErr(err error) string {
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		s := rfc.ErrorField + ": " + rfc.GetDescription()
		if c := rfc.Cause(); c != nil && !errors.Is(c, rfc) {
			var inner *fosite.RFC6749Error
			if errors.As(c, &inner) {
				s += " (" + inner.ErrorField + ")"
			} else {
				s += " (" + c.Error() + ")"
			}
		}
		return s
	}
	return err.Error()
}

// writeJSONError is the one writer of JSON protocol errors (token,
// revocation, introspection, userinfo).
func writeJSONError(w http.ResponseWriter, e oauthError) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if e.Status == http.StatusUnauthorized && e.Code == "invalid_client" {
		w.Header().Set("WWW-Authenticate", `Basic realm="linkslot"`)
	}
	writeJSON(w, e.Status, e)
}

// fail classifies err, logs it when it is internal, and writes it.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e, internal := classify(err)
	if internal {
		h.logError(r.Context(), r, err)
	} else {
		h.d.Log.DebugContext(r.Context(), "request refused", "path", r.URL.Path, "error", e.Code)
	}
	writeJSONError(w, e)
}

// redirectError sends an authorize error back to the client's (already
// validated) redirect URI, with state and iss (RFC 9207).
func (h *Handler) redirectError(w http.ResponseWriter, r *http.Request, redirect *url.URL, state string, e oauthError) {
	u := *redirect
	q := u.Query()
	q.Set("error", e.Code)
	if e.Description != "" {
		q.Set("error_description", e.Description)
	}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", h.d.Issuer)
	u.RawQuery = q.Encode()
	u.Fragment = ""
	w.Header().Set("Cache-Control", "no-store")
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, u.String(), status)
}

// displayError shows an error page to the person (never a redirect).
func (h *Handler) displayError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.Header().Set("Cache-Control", "no-store")
	h.d.UI.RenderError(w, r, status, title, message)
}
