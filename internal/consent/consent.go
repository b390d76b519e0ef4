// Package consent is the boundary between the authorization server's
// authorize endpoint and the pages a person sees (consent-ui). The endpoint
// decides what must happen next — sign in, approve, or an error shown to the
// person — and asks a UI to show it; the UI owns sessions, CSRF and
// templates. Keeping the boundary this small lets the pages change without
// touching the OAuth flow.
package consent

import (
	"net/http"
	"net/url"
	"time"

	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// ConsentView is what the consent page shows: who asks, for which account,
// for what, and how to answer.
type ConsentView struct {
	ClientName   string
	ClientID     string
	ClientLogo   string
	RedirectHost string // host of the redirect URI, so the person sees where they will land
	AccountEmail string
	Scopes       []scope.Scope // exactly what will be granted
	// Action is where the form posts (the authorize endpoint); Params are
	// the authorize parameters to re-post as hidden fields together with
	// "decision" = "allow" or "deny" and the CSRF token field.
	Action    string
	Params    url.Values
	CSRFToken string

	// A client identified by the URL of its metadata document (docs/reference.md
	// §10) is shown by the host of that URL, in bold, with the name it
	// gives itself beside it.
	URLClient  bool
	ClientHost string
	// RedirectURL is the full address the person is sent back to.
	RedirectURL string
	// AllLoopback: every redirect the client lists is on the person's own
	// computer (127.0.0.1, [::1], localhost).
	AllLoopback bool
	// Unverified: the client links under the open policy; Linkslot has
	// not verified it.
	Unverified bool
	// Dynamic: the client registered itself (dynamic client registration,
	// docs/reference.md §14); it is Unverified, and ClientHost names where
	// it sends the person back: its redirect's host, or its private-use
	// scheme.
	Dynamic bool
	// EmailUnverified: the account has not confirmed its address yet, so
	// the page offers no Allow, only a new confirmation link and Deny.
	EmailUnverified bool
}

// UI renders the pages the authorize endpoint needs.
type UI interface {
	// CurrentAccount returns the signed-in account, if any.
	CurrentAccount(r *http.Request) (store.Account, bool)
	// LoginRedirect sends the browser to sign in, then back to next (a
	// same-origin path).
	LoginRedirect(w http.ResponseWriter, r *http.Request, next string)
	// CSRFToken returns the token a form on this request must carry.
	CSRFToken(w http.ResponseWriter, r *http.Request) string
	// VerifyCSRF reports whether a POST carries a valid token.
	VerifyCSRF(r *http.Request) bool
	// RenderConsent shows the consent page.
	RenderConsent(w http.ResponseWriter, r *http.Request, v ConsentView)
	// RenderError shows a fixed, safe error page (never client-supplied
	// text beyond what is escaped, never a secret).
	RenderError(w http.ResponseWriter, r *http.Request, status int, title, message string)
}

// AuthorizeUI is what the authorize endpoint needs of the pages: the UI,
// when the signed-in person last proved who they are, and a sign-in page
// that asks a signed-in person again (OpenID Connect prompt=login and
// max_age, docs/prompt-and-max-age.md).
type AuthorizeUI interface {
	UI
	// CurrentSignIn returns the signed-in account and its authentication
	// time, in the one read CurrentAccount makes.
	CurrentSignIn(r *http.Request) (SignIn, bool)
	// ReauthRedirect sends the browser to the sign-in page, shown even to
	// a signed-in person, then back to next (a same-origin path).
	ReauthRedirect(w http.ResponseWriter, r *http.Request, next string)
	// RenderRedirectRefusal shows the page of a refused redirect address
	// (docs/reference.md §14), never a redirect.
	RenderRedirectRefusal(w http.ResponseWriter, r *http.Request, status int, v RedirectRefusal)
}

// SignIn is the signed-in person of a request.
type SignIn struct {
	Account store.Account
	// AuthTime is when the person last authenticated, with a password or
	// a passkey: the auth_time of the ID tokens issued to them.
	AuthTime time.Time
}

// CSRFField is the form field carrying the CSRF token.
const CSRFField = "csrf_token"
