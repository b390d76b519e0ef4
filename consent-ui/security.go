package consentui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/loopback"
	"github.com/linkslot/linkslot/internal/store"
)

// loopbackFormTargets are the redirect targets a client may register
// besides https (docs/reference.md §2), for form-action when the exact one is not
// known.
var loopbackFormTargets = []string{"https:", "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"}

// setSecurityHeaders sets the headers every answer carries. extraFormAction
// lists the sources besides 'self' that a form on the page may end up at
// through redirects.
func setSecurityHeaders(w http.ResponseWriter, extraFormAction []string) {
	fa := "'self'"
	if len(extraFormAction) > 0 {
		fa += " " + strings.Join(extraFormAction, " ")
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action "+
		fa+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// formTargetsFor returns the form-action sources for a flow that may
// redirect to redirectURI: its origin when it is a valid http(s) URL,
// otherwise every target a client may register.
func formTargetsFor(redirectURI string) []string {
	if redirectURI == "" {
		return loopbackFormTargets
	}
	ru, err := url.Parse(redirectURI)
	if err == nil && ru.Scheme != "https" && ru.Scheme != "http" && clients.PrivateUse(ru) {
		// A native app's own scheme (RFC 8252 §7.1): a scheme source.
		return []string{strings.ToLower(ru.Scheme) + ":"}
	}
	if err != nil || (ru.Scheme != "https" && ru.Scheme != "http") || ru.Host == "" ||
		strings.ContainsAny(ru.Host, " ;,'\"") {
		return loopbackFormTargets
	}
	if ru.Port() == "" && ru.Scheme == "http" && loopback.Host(ru.Hostname()) {
		// A loopback redirect matches any port (RFC 8252 §7.3).
		return []string{ru.Scheme + "://" + ru.Host + ":*"}
	}
	return []string{ru.Scheme + "://" + ru.Host}
}

// formTargetsForNext looks for the redirect_uri of an authorize request in
// a "next" path; a next without one needs no extra source.
func formTargetsForNext(next string) []string {
	if next == "" {
		return nil
	}
	nu, err := url.Parse(next)
	if err != nil {
		return nil
	}
	q := nu.Query()
	if q.Get("client_id") == "" && q.Get("redirect_uri") == "" {
		return nil
	}
	return formTargetsFor(q.Get("redirect_uri"))
}

// SafeNext reports whether next is a same-origin path that is safe to
// redirect to after sign-in: it starts with exactly one "/", has no
// backslash, no control character, and no scheme or host.
func SafeNext(next string) bool {
	if next == "" || len(next) > 4096 || next[0] != '/' {
		return false
	}
	if strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') {
		return false
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	return strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//")
}

// noStore marks an answer with personal data as not cacheable.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

func (u *UI) setCookie(w http.ResponseWriter, name, value string, expires time.Time) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode}
	if !expires.IsZero() {
		c.Expires = expires
		c.MaxAge = int(expires.Sub(u.clock()).Seconds())
		if c.MaxAge <= 0 {
			c.MaxAge = 1
		}
	}
	http.SetCookie(w, c)
}

func (u *UI) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: u.secure, SameSite: http.SameSiteLaxMode})
}

func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// setCookieValue returns the value of a cookie already set on this answer,
// so that one request hands out one anonymous CSRF cookie however often it
// asks for a token.
func setCookieValue(w http.ResponseWriter, name string) string {
	for _, line := range w.Header().Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == name && c.MaxAge >= 0 {
			return c.Value
		}
	}
	return ""
}

func (u *UI) csrfFor(binding string) string {
	mac := hmac.New(sha256.New, u.csrfKey)
	mac.Write([]byte(binding))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// csrfBinding is what a token on this request is bound to: the session
// cookie when there is one (valid or not: the page that needs an account
// checks that), else the anonymous CSRF cookie.
func (u *UI) csrfBinding(r *http.Request) string {
	if s := cookieValue(r, u.sessionCookie); s != "" {
		return "session\x00" + s
	}
	if a := cookieValue(r, u.anonCookie); a != "" {
		return "anon\x00" + a
	}
	return ""
}

// CSRFToken returns the token the forms of this answer must carry, setting
// the anonymous CSRF cookie first when the browser has neither cookie.
func (u *UI) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	if b := u.csrfBinding(r); b != "" {
		return u.csrfFor(b)
	}
	v := setCookieValue(w, u.anonCookie)
	if v == "" {
		v = store.RandomString(32)
		u.setCookie(w, u.anonCookie, v, time.Time{})
	}
	return u.csrfFor("anon\x00" + v)
}

// VerifyCSRF reports whether the request carries the token that matches
// its cookies (constant-time).
func (u *UI) VerifyCSRF(r *http.Request) bool {
	got := r.PostFormValue(consent.CSRFField)
	b := u.csrfBinding(r)
	if got == "" || b == "" {
		return false
	}
	return hmac.Equal([]byte(got), []byte(u.csrfFor(b)))
}
