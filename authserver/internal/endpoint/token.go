package endpoint

import (
	"context"
	"errors"
	"net/http"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/authheader"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		writeJSONError(w, oauthError{"invalid_request", "The request body could not be read.", http.StatusBadRequest})
		return
	}
	if _, ok := h.resource(r.PostForm["resource"]); !ok {
		writeJSONError(w, errInvalidTarget)
		return
	}
	grant := r.PostForm.Get("grant_type")
	ar, err := h.d.Provider.NewAccessRequest(ctx, r, fositestore.NewSession())
	if err != nil {
		h.d.Metrics.ObserveToken(grant, tokenOutcome(err))
		h.fail(w, r, err)
		return
	}
	resp, err := h.d.Provider.NewAccessResponse(ctx, ar)
	if err != nil {
		h.d.Metrics.ObserveToken(grant, tokenOutcome(err))
		h.fail(w, r, err)
		return
	}
	h.d.Metrics.ObserveToken(grant, "ok")
	if h.d.Provider.GraceAnswered(ar) {
		h.d.Metrics.ObserveRefreshGrace()
	}
	h.d.Provider.WriteAccessResponse(ctx, w, ar, resp)
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := h.d.Provider.NewRevocationRequest(ctx, r); err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) introspect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// Confidential clients only: a public client has no credential worth
	// checking, and introspection would let anyone probe tokens.
	id, _, ok := r.BasicAuth()
	if !ok {
		if err := r.ParseForm(); err == nil {
			id = r.PostForm.Get("client_id")
		}
	}
	if cimd.IsURL(id) {
		if c, err := h.d.URLClients.Lookup(ctx, id); err == nil && c.Public {
			writeJSONError(w, errPublicIntrospt)
			return
		}
	} else if c, err := h.d.Store.GetClient(ctx, id); err == nil && c.Public {
		writeJSONError(w, errPublicIntrospt)
		return
	}
	// A client authenticating with private_key_jwt (docs/reference.md §10)
	// too: the provider's introspection request accepts it.
	ir, err := h.d.Provider.NewIntrospectionRequest(ctx, r, fositestore.NewSession())
	if err != nil {
		if errors.Is(err, fosite.ErrInactiveToken) {
			writeJSON(w, http.StatusOK, map[string]bool{"active": false})
			return
		}
		h.fail(w, r, err)
		return
	}
	// fosite's writer reports the session's access-token expiry whatever
	// the token; a refresh token's exp is its own. Written into the map:
	// SetExpiresAt(AccessToken) means an access token is being issued.
	if ir.GetTokenUse() == fosite.RefreshToken {
		if sess, ok := ir.GetAccessRequester().GetSession().(*fositestore.Session); ok && !sess.GetExpiresAt(fosite.RefreshToken).IsZero() {
			sess.ExpiresAt[fosite.AccessToken] = sess.GetExpiresAt(fosite.RefreshToken)
		}
	}
	h.d.Provider.WriteIntrospectionResponse(ctx, w, ir)
}

func (h *Handler) userinfo(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tok, err := authheader.Bearer(r.Header)
	switch {
	case errors.Is(err, authheader.ErrMissing):
		w.Header().Set("WWW-Authenticate", `Bearer realm="linkslot"`)
		writeJSONError(w, oauthError{"invalid_request", "A bearer access token is required.", http.StatusUnauthorized})
		return
	case errors.Is(err, authheader.ErrMultiple):
		w.Header().Set("WWW-Authenticate", `Bearer realm="linkslot", error="invalid_request"`)
		writeJSONError(w, oauthError{"invalid_request", "Send exactly one Authorization header.", http.StatusBadRequest})
		return
	case err != nil:
		w.Header().Set("WWW-Authenticate", `Bearer realm="linkslot", error="invalid_token"`)
		writeJSONError(w, oauthError{"invalid_token", "The Authorization header must be \"Bearer\", one space, and the access token.", http.StatusUnauthorized})
		return
	}
	sess := fositestore.NewSession()
	_, ar, err := h.d.Provider.IntrospectToken(ctx, tok, fosite.AccessToken, sess)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSONError(w, errInvalidToken)
		return
	}
	granted := ar.GetGrantedScopes()
	if !granted.Has(scope.OpenID) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="openid"`)
		writeJSONError(w, oauthError{"insufficient_scope", "The access token was not granted the openid scope.", http.StatusForbidden})
		return
	}
	claims, err := h.userClaims(ctx, ar.GetSession().GetSubject(), granted)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		if !errors.Is(err, store.ErrNotFound) {
			h.logError(ctx, r, err)
		}
		writeJSONError(w, errInvalidToken)
		return
	}
	writeJSON(w, http.StatusOK, claims)
}

func (h *Handler) userClaims(ctx context.Context, sub string, granted fosite.Arguments) (map[string]any, error) {
	acct, err := h.d.Store.GetAccount(ctx, sub)
	if err != nil {
		return nil, err
	}
	if acct.Disabled {
		return nil, store.ErrNotFound
	}
	claims := map[string]any{"sub": acct.ID}
	if granted.Has(scope.Email) {
		claims["email"] = acct.Email
	}
	if granted.Has(scope.Profile) {
		claims["preferred_username"] = acct.Email
		claims["updated_at"] = acct.UpdatedAt.Unix()
	}
	return claims, nil
}

// tokenOutcome is the RFC 6749 error code of a failed token request, for
// metrics; anything unrecognized counts as server_error.
func tokenOutcome(err error) string {
	var e *fosite.RFC6749Error
	if errors.As(err, &e) && e.ErrorField != "" {
		return e.ErrorField
	}
	return "server_error"
}
