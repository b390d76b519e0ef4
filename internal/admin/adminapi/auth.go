package adminapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/authheader"
	"github.com/linkslot/linkslot/internal/store"
)

// Authenticator decides whether a request comes from an administrator and
// names the actor recorded in the audit log.
type Authenticator interface {
	Admin(r *http.Request) (actorID string, ok bool)
}

// identifier is optionally implemented by an Authenticator that can tell a
// signed-in person who is not an administrator (answered 403) from nobody
// (answered 401).
type identifier interface {
	Identified(r *http.Request) bool
}

// ActorToken is the actor recorded for requests made with the admin token.
const ActorToken = "admin-token"

// MinTokenLength is the shortest admin token TokenAuth accepts; a shorter
// configured token turns token authentication off (internal/config refuses
// one at start, with the other configuration problems).
const MinTokenLength = 16

// TokenAuth accepts "Authorization: Bearer <token>" carrying the configured
// admin token, compared in constant time.
type TokenAuth struct {
	sum [sha256.Size]byte
	on  bool
}

var _ Authenticator = (*TokenAuth)(nil)

// NewTokenAuth returns a TokenAuth for token. An empty (or too short) token
// returns an authenticator that accepts nothing: token auth is off.
func NewTokenAuth(token string) *TokenAuth {
	if len(token) < MinTokenLength {
		return &TokenAuth{}
	}
	return &TokenAuth{sum: sha256.Sum256([]byte(token)), on: true}
}

// Enabled reports whether a token is configured.
func (a *TokenAuth) Enabled() bool { return a != nil && a.on }

// Admin implements Authenticator.
func (a *TokenAuth) Admin(r *http.Request) (string, bool) {
	if !a.Enabled() {
		return "", false
	}
	tok, err := authheader.Bearer(r.Header)
	if err != nil {
		return "", false
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// presented length.
	got := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(got[:], a.sum[:]) != 1 {
		return "", false
	}
	return ActorToken, true
}

// AccountSource is what SessionAuth needs from the consent UI:
// consentui.UI and every consent.UI provide it.
type AccountSource interface {
	CurrentAccount(r *http.Request) (store.Account, bool)
}

// SessionAuth accepts the consent UI's signed-in session of an account
// with the admin role. Because the browser sends the session cookie by
// itself, requests that change something must also pass Go's cross-origin
// protection (Sec-Fetch-Site / Origin): a page on another site cannot drive
// the API with an administrator's cookie.
type SessionAuth struct {
	accounts AccountSource
	cop      *http.CrossOriginProtection
}

var (
	_ Authenticator = (*SessionAuth)(nil)
	_ identifier    = (*SessionAuth)(nil)
)

// NewSessionAuth returns a SessionAuth over the consent UI's sessions.
func NewSessionAuth(accounts AccountSource) *SessionAuth {
	return &SessionAuth{accounts: accounts, cop: http.NewCrossOriginProtection()}
}

// Admin implements Authenticator.
func (a *SessionAuth) Admin(r *http.Request) (string, bool) {
	if a == nil || a.accounts == nil {
		return "", false
	}
	acct, ok := a.accounts.CurrentAccount(r)
	if !ok || !admin.IsAdmin(acct) {
		return "", false
	}
	if err := a.cop.Check(r); err != nil {
		return "", false
	}
	return acct.ID, true
}

// Identified implements identifier: someone is signed in.
func (a *SessionAuth) Identified(r *http.Request) bool {
	if a == nil || a.accounts == nil {
		return false
	}
	_, ok := a.accounts.CurrentAccount(r)
	return ok
}

// AnyOf accepts a request that any of its authenticators accepts, tried in
// order; nil entries are skipped.
type AnyOf []Authenticator

var (
	_ Authenticator = AnyOf(nil)
	_ identifier    = AnyOf(nil)
)

// Admin implements Authenticator.
func (as AnyOf) Admin(r *http.Request) (string, bool) {
	for _, a := range as {
		if a == nil {
			continue
		}
		if id, ok := a.Admin(r); ok {
			return id, true
		}
	}
	return "", false
}

// Identified implements identifier.
func (as AnyOf) Identified(r *http.Request) bool {
	for _, a := range as {
		if i, ok := a.(identifier); ok && i.Identified(r) {
			return true
		}
	}
	return false
}
