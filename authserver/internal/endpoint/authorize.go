package endpoint

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// Form fields of the consent decision, posted back to the authorize endpoint.
const (
	FieldDecision = "decision"
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		h.displayError(w, r, http.StatusBadRequest, "Invalid request", "The authorization request could not be read.")
		return
	}
	// The decision and CSRF token are ours, not the client's: take them out
	// before fosite sees the form (and before anything is stored).
	decision := r.Form.Get(FieldDecision)
	csrfOK := r.Method == http.MethodPost && decision != "" && h.d.UI.VerifyCSRF(r)
	r.Form.Del(FieldDecision)
	r.Form.Del(consent.CSRFField)
	if r.PostForm != nil {
		r.PostForm.Del(FieldDecision)
		r.PostForm.Del(consent.CSRFField)
	}

	// The person, if signed in: read first, so that a registered client
	// and the person's link to it are then one statement.
	signIn, signedIn := h.d.UI.CurrentSignIn(r)
	acct := signIn.Account

	// 1. Client and redirect URI: an error here is shown, never redirected.
	var urlClient *cimd.Client
	if id := r.Form.Get("client_id"); cimd.IsURL(id) {
		c, err := h.d.URLClients.Lookup(ctx, id)
		if err != nil {
			h.refuseURLClient(w, r, id, err)
			return
		}
		urlClient = &c
	}
	client, known, err := h.lookupClient(ctx, urlClient, r.Form.Get("client_id"), acct.ID)
	if err != nil || client.Disabled {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			h.logError(ctx, r, err)
			h.displayError(w, r, http.StatusInternalServerError, "Something went wrong", "The request could not be completed. Please try again.")
			return
		}
		h.displayError(w, r, http.StatusBadRequest, "Unknown application", "The application that sent you here is not registered with Linkslot, or has been disabled.")
		return
	}
	redirect := r.Form.Get("redirect_uri")
	if redirectRefused(client, redirect) {
		h.refuseRedirect(w, r, client, urlClient, redirect)
		return
	}

	// 2. fosite's validation, its client look-up answered from the client
	// read above; errors now go back to the client.
	ar, err := h.newAuthorizeRequest(ctx, r, provider.Known{Client: &client, URL: urlClient})
	if err != nil {
		h.authorizeError(w, r, ar, err)
		return
	}
	state := ar.GetState()
	back := ar.GetRedirectURI()
	if m := r.Form.Get("code_challenge_method"); r.Form.Get("code_challenge") == "" {
		h.redirectError(w, r, back, state, errPKCE("PKCE is required: send code_challenge with code_challenge_method=S256."))
		return
	} else if m != "S256" {
		h.redirectError(w, r, back, state, errPKCE("Only the S256 code_challenge_method is supported."))
		return
	} else if !validChallenge(r.Form.Get("code_challenge")) {
		// A challenge no verifier can match is refused now, not at the
		// token endpoint (docs/reference.md §2).
		h.redirectError(w, r, back, state, errPKCE("code_challenge must be 43 to 128 base64url characters (A-Z, a-z, 0-9, '-', '_'): "+
			"the unpadded base64url encoding of the SHA-256 of the code_verifier."))
		return
	}
	resource, ok := h.resource(r.Form["resource"])
	if !ok {
		h.redirectError(w, r, back, state, errInvalidTarget)
		return
	}
	granted := grantedScopes(ar.GetRequestedScopes(), client)
	now := h.d.Clock()
	ask, perr := parseAuthAsk(r.Form, now)
	if perr != nil {
		h.redirectError(w, r, back, state, *perr)
		return
	}

	// 3. The person: signed in, and recently enough for prompt=login and
	// max_age; prompt=none shows no page.
	switch {
	case !signedIn && ask.none:
		h.redirectError(w, r, back, state, errLoginRequired("The person is not signed in."))
		return
	case !signedIn:
		h.d.UI.LoginRedirect(w, r, ask.signInNext(r.Form, now))
		return
	case ask.needsSignIn(signIn.AuthTime, now) && ask.none:
		h.redirectError(w, r, back, state, errLoginRequired("The person signed in longer ago than max_age allows."))
		return
	case ask.needsSignIn(signIn.AuthTime, now):
		h.d.UI.ReauthRedirect(w, r, ask.signInNext(r.Form, now))
		return
	}

	var link store.Link
	// approve, on an allowed consent POST, records the approval in the
	// transaction that stores the code.
	var approve func(ctx context.Context, tx ApprovalTx) (store.Link, error)
	switch {
	case r.Method == http.MethodPost && decision != "":
		if !csrfOK {
			h.displayError(w, r, http.StatusForbidden, "Request expired", "This form has expired. Go back to the application and start again.")
			return
		}
		if decision != DecisionAllow {
			h.redirectError(w, r, back, state, errAccessDenied)
			return
		}
		if acct.EmailVerifiedAt == nil {
			// No approval before the address is confirmed: the page says so.
			h.renderConsent(w, r, client, urlClient, acct, back, granted)
			return
		}
		approve = func(ctx context.Context, tx ApprovalTx) (store.Link, error) {
			if urlClient != nil && !urlClient.Recorded() {
				// An open-policy client's first approval records it, so
				// the link has a client to belong to.
				if err := tx.CreateClient(ctx, urlClient.NewRecord(h.d.Clock())); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
					return store.Link{}, err
				}
			}
			return h.d.Approvals.Approve(ctx, tx, acct, client, granted, h.d.Clock())
		}
	default:
		link, err = known.link(ctx, h.d.Store, acct.ID, client.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			h.authorizeError(w, r, ar, err)
			return
		}
		remembered := err == nil && scope.Covers(link.Scopes, granted)
		if !remembered && ask.none {
			h.redirectError(w, r, back, state, oauthError{"consent_required", "The person has not approved this request.", http.StatusBadRequest})
			return
		}
		if !remembered || ask.consent {
			h.renderConsent(w, r, client, urlClient, acct, back, granted)
			return
		}
		// Remembered consent. Recording use is best-effort and coalesced.
		if now := h.d.Clock(); now.Sub(link.LastUsedAt) > fositestore.TouchEvery {
			if err := h.d.Store.TouchLink(ctx, link.ID, now); err != nil {
				h.d.Log.WarnContext(ctx, "touch link failed", "link_id", link.ID, "err", err.Error())
			}
		}
	}

	// 4. Issue the code. auth_time is the person's sign-in; fosite's
	// OpenID Connect validator checks prompt and max_age against it and
	// the time the request was made, once more.
	ar.GetRequestForm().Del(FieldAuthAfter) // ours, not to be stored with the code
	authTime := signIn.AuthTime.UTC().Truncate(time.Second)
	sess := &fositestore.Session{Subject: acct.ID, LinkID: link.ID, ClientID: client.ID, AuthTime: authTime, GrantedAt: now,
		IDClaims: &jwt.IDTokenClaims{Subject: acct.ID, AuthTime: authTime, RequestedAt: ask.requestedAt(now), Extra: map[string]any{}}}
	if slices.Contains(granted, scope.Email) {
		sess.IDClaims.Extra["email"] = acct.Email
	}
	for _, s := range granted {
		ar.GrantScope(s)
	}
	ar.GrantAudience(resource)
	resp, err := h.newAuthorizeResponse(ctx, ar, sess, approve)
	if err != nil {
		h.authorizeError(w, r, ar, err)
		return
	}
	resp.AddParameter("iss", h.d.Issuer)
	if state == "" {
		// fosite adds state even when the request had none.
		resp.GetParameters().Del("state")
	}
	w.Header().Set("Cache-Control", "no-store")
	h.d.Provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// grantedScopes applies the scope rule. MCP clients ask only for what the
// resource server's challenge names (openid), sometimes with public scopes
// of their own (offline_access, profile, email); such a request — empty, or
// holding openid and no private scope — is granted what it asked plus the
// client's default scopes. A request that names a private scope, or public
// scopes without openid, is granted exactly as asked.
func grantedScopes(requested fosite.Arguments, c store.Client) []string {
	set := map[string]bool{}
	for _, s := range requested {
		set[s] = true
	}
	private := false
	for s := range set {
		if sc, ok := scope.Lookup(s); !ok || !sc.Public {
			private = true
		}
	}
	if len(requested) == 0 || set[scope.OpenID] && !private {
		if len(requested) == 0 && slices.Contains(c.AllowedScopes, scope.OpenID) {
			set[scope.OpenID] = true
		}
		for _, s := range c.DefaultScopes {
			set[s] = true
		}
	}
	return scope.Ordered(set)
}

// authorizeError sends err to the client when the redirect URI is known,
// and shows it otherwise.
// statePlaceholder stands in for a missing or short state during fosite's
// validation; it never reaches the client or the store.
const statePlaceholder = "linkslot-state-placeholder"

// newAuthorizeRequest is fosite's NewAuthorizeRequest with state optional.
// OAuth 2.1 with PKCE makes state optional and MCP clients omit it, but
// fosite refuses a state shorter than its minimum entropy (8 characters),
// an absent one included, whatever its configuration. Such a state is
// shown to fosite as a placeholder and put back afterwards, so the client
// gets back exactly the state it sent, and none when it sent none.
func (h *Handler) newAuthorizeRequest(ctx context.Context, r *http.Request, known provider.Known) (fosite.AuthorizeRequester, error) {
	sent := r.Form["state"]
	if len(sent) > 1 || len(sent) == 1 && len(sent[0]) >= fosite.MinParameterEntropy {
		return h.d.Provider.NewAuthorizeRequest(ctx, r, known)
	}
	state := r.Form.Get("state")
	r.Form.Set("state", statePlaceholder)
	ar, err := h.d.Provider.NewAuthorizeRequest(ctx, r, known)
	// fosite keeps r.Form as the request's form: restore it in both.
	if state == "" {
		r.Form.Del("state")
	} else {
		r.Form.Set("state", state)
	}
	if req, ok := ar.(*fosite.AuthorizeRequest); ok && req != nil {
		req.State = state
		if req.Form != nil {
			if state == "" {
				req.Form.Del("state")
			} else {
				req.Form.Set("state", state)
			}
		}
	}
	return ar, err
}

func (h *Handler) authorizeError(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	e, internal := classify(err)
	if internal {
		h.logError(r.Context(), r, err)
	}
	if ar == nil || ar.GetRedirectURI() == nil || ar.GetRedirectURI().String() == "" {
		h.displayError(w, r, e.Status, "The request could not be completed", e.Description)
		return
	}
	h.redirectError(w, r, ar.GetRedirectURI(), ar.GetState(), e)
}

// lookupClient is the client of an authorization request: the resolved URL
// client, or the registered one read together with accountID's active link
// to it (accountID empty: nobody is signed in).
func (h *Handler) lookupClient(ctx context.Context, urlClient *cimd.Client, id, accountID string) (store.Client, knownLink, error) {
	if urlClient != nil {
		return urlClient.Client, knownLink{}, nil
	}
	c, l, err := h.d.Store.GetClientLink(ctx, id, accountID)
	return c, knownLink{read: accountID != "", l: l}, err
}

// knownLink is the person's active link to the client when lookupClient
// read it already.
type knownLink struct {
	read bool
	l    *store.Link
}

// link returns the active link of (accountID, clientID): the one read with
// the client, or read now.
func (k knownLink) link(ctx context.Context, s Store, accountID, clientID string) (store.Link, error) {
	if !k.read {
		return s.GetActiveLink(ctx, accountID, clientID)
	}
	if k.l == nil {
		return store.Link{}, store.ErrNotFound
	}
	return *k.l, nil
}

// refuseURLClient shows why a URL client may not link, on the error page
// (never a redirect: nothing about the client can be trusted yet), and
// logs the rule and cause.
func (h *Handler) refuseURLClient(w http.ResponseWriter, r *http.Request, id string, err error) {
	var ref *cimd.Refusal
	if !errors.As(err, &ref) {
		h.logError(r.Context(), r, err)
		h.displayError(w, r, http.StatusInternalServerError, "Something went wrong", "The request could not be completed. Please try again.")
		return
	}
	attrs := []any{"client_id", id, "rule", ref.Rule}
	if ref.Err != nil {
		attrs = append(attrs, "err", ref.Err.Error())
	}
	h.d.Log.InfoContext(r.Context(), "url client refused", attrs...)
	h.displayError(w, r, http.StatusBadRequest, ref.Title, ref.Message)
}

func (h *Handler) renderConsent(w http.ResponseWriter, r *http.Request, c store.Client, uc *cimd.Client, acct store.Account, back *url.URL, granted []string) {
	scopes := make([]scope.Scope, 0, len(granted))
	for _, s := range granted {
		if sc, ok := scope.Lookup(s); ok {
			scopes = append(scopes, sc)
		}
	}
	params := url.Values{}
	for k, v := range r.Form {
		params[k] = slices.Clone(v)
	}
	w.Header().Set("Cache-Control", "no-store")
	cv := consent.ConsentView{
		ClientName: c.Name, ClientID: c.ID, ClientLogo: c.LogoURL, RedirectHost: back.Host,
		AccountEmail: acct.Email, Scopes: scopes, Action: PathAuthorize, Params: params,
		CSRFToken: h.d.UI.CSRFToken(w, r), EmailUnverified: acct.EmailVerifiedAt == nil,
	}
	if uc != nil {
		cv.URLClient, cv.ClientHost, cv.Unverified = true, uc.Doc.Host(), uc.Open
		cv.ClientLogo = "" // an outside image would tell its host who is looking
		u := *back
		u.RawQuery, u.Fragment = "", ""
		cv.RedirectURL = u.String()
		cv.AllLoopback = !slices.ContainsFunc(uc.Doc.RedirectURIs, func(r string) bool { return !clients.IsLoopbackRedirect(r) })
	} else if clients.IsDynamicID(c.ID) {
		// Anyone may register under any name: say so, and name where the
		// person goes back to instead of showing an outside logo.
		cv.Dynamic, cv.Unverified, cv.ClientLogo = true, true, ""
		u := *back
		u.RawQuery, u.Fragment = "", ""
		cv.RedirectURL, cv.ClientHost = u.String(), clients.ReturnTarget(u.String())
		cv.AllLoopback = !slices.ContainsFunc(c.RedirectURIs, func(r string) bool { return !clients.IsLoopbackRedirect(r) })
	}
	h.d.UI.RenderConsent(w, r, cv)
}

// newAuthorizeResponse runs fosite's authorize handlers in one transaction.
// approve, when set, runs first in the same database transaction and gives
// the session its link: the approval and the code commit together, and a
// failure of either leaves neither.
func (h *Handler) newAuthorizeResponse(ctx context.Context, ar fosite.AuthorizeRequester, sess *fositestore.Session,
	approve func(context.Context, ApprovalTx) (store.Link, error)) (fosite.AuthorizeResponder, error) {
	tctx, err := h.d.Tx.BeginTX(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := func() (fosite.AuthorizeResponder, error) {
		if approve != nil {
			tx, err := h.d.Tx.TxStore(tctx)
			if err != nil {
				return nil, err
			}
			link, err := approve(tctx, tx)
			if err != nil {
				return nil, err
			}
			sess.LinkID = link.ID
		}
		return h.d.Provider.NewAuthorizeResponse(tctx, ar, sess)
	}()
	if err != nil {
		_ = h.d.Tx.Rollback(tctx)
		return nil, err
	}
	if err := h.d.Tx.Commit(tctx); err != nil {
		return nil, err
	}
	return resp, nil
}

// validChallenge reports whether a code_challenge is 43 to 128 base64url
// characters, the form RFC 7636 §4.2 gives it.
func validChallenge(c string) bool {
	if len(c) < 43 || len(c) > 128 {
		return false
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}
