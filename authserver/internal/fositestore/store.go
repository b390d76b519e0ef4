package fositestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/openid"
	"github.com/ory/fosite/handler/pkce"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/store"
)

// Options configure a Store.
type Options struct {
	// Audience is what clients may request as audience: the configured
	// resources.
	Audience []string
	// RefreshAbsolute caps a refresh family's lifetime from its first grant.
	RefreshAbsolute time.Duration
	// Clock is checked against stored expiries (default store.SystemClock).
	Clock store.Clock
}

// Store is fosite's storage on top of store.Store.
type Store struct {
	s    store.Store
	fast store.FastTokens // s's combined statements, when it has them
	opts Options
}

var (
	_ fosite.ClientManager               = (*Store)(nil)
	_ oauth2.CoreStorage                 = (*Store)(nil)
	_ oauth2.TokenRevocationStorage      = (*Store)(nil)
	_ pkce.PKCERequestStorage            = (*Store)(nil)
	_ openid.OpenIDConnectRequestStorage = (*Store)(nil)
	_ fosite.Hasher                      = SecretHasher{}
	_ fosite.Client                      = (*Client)(nil)
)

// New returns the fosite storage.
func New(s store.Store, opts Options) *Store {
	if opts.Clock == nil {
		opts.Clock = store.SystemClock
	}
	fast, _ := s.(store.FastTokens)
	return &Store{s: s, fast: fast, opts: opts}
}

// Client adapts a store.Client to fosite.
type Client struct {
	C        store.Client
	Audience []string
	// extraRedirect is a loopback redirect URI that matched a registered
	// one on every part but the port (RFC 8252 §7.3); fosite's own matcher
	// compares strings.
	extraRedirect string
}

func (c *Client) GetID() string           { return c.C.ID }
func (c *Client) GetHashedSecret() []byte { return []byte(c.C.SecretHash) }
func (c *Client) GetRedirectURIs() []string {
	if c.extraRedirect != "" {
		return append(append([]string(nil), c.C.RedirectURIs...), c.extraRedirect)
	}
	return c.C.RedirectURIs
}
func (c *Client) GetGrantTypes() fosite.Arguments    { return c.C.GrantTypes }
func (c *Client) GetResponseTypes() fosite.Arguments { return fosite.Arguments{"code"} }
func (c *Client) GetScopes() fosite.Arguments        { return c.C.AllowedScopes }
func (c *Client) IsPublic() bool                     { return c.C.Public }
func (c *Client) GetAudience() fosite.Arguments      { return c.Audience }

type redirectKey struct{}

// WithRequestedRedirect tells GetClient which redirect URI the current
// request names, so a loopback URI with another port can be accepted.
func WithRequestedRedirect(ctx context.Context, redirect string) context.Context {
	return context.WithValue(ctx, redirectKey{}, redirect)
}

// TouchEvery is how stale a link's last-used time may get before a use
// records it again.
const TouchEvery = time.Hour

type clientCacheKey struct{}

type clientCache struct {
	mu sync.Mutex
	m  map[string]store.Client
	// rows are token sessions read in this request: a code exchange reads
	// the code twice, and its PKCE and OpenID sessions once each; the first
	// read of the code fetches all of them in one statement.
	rows map[store.TokenRef]store.TokenSession
	// gone are sessions a pending batch deletes (the OpenID session of a
	// redeemed code): deleting them again is a no-op.
	gone map[store.TokenRef]bool
	// links are the link states of prefetched refresh sessions.
	links map[store.TokenRef]store.LinkState
	// deferring is set between BeginDeferral and EndDeferral: deletions of
	// PKCE sessions then wait in deferred to join the request's token batch
	// (batched, those already taken by a batch).
	deferring bool
	deferred  []store.TokenRef
	batched   []store.TokenRef
}

// BeginDeferral lets the PKCE-session deletion of the token request in ctx
// (see WithClientCache) join the batch that redeems the code, instead of
// costing a statement and a commit of its own. The caller must call
// EndDeferral when the request is answered, on every path: it writes
// whatever deletion is still pending, so a failed attempt still uses up
// the PKCE session exactly as before.
func (st *Store) BeginDeferral(ctx context.Context) {
	if cc := cacheOf(ctx); cc != nil && st.fast != nil {
		cc.mu.Lock()
		cc.deferring = true
		cc.mu.Unlock()
	}
}

// EndDeferral writes the deletions still pending (failed: also those of a
// batch that was not written) and stops deferring.
func (st *Store) EndDeferral(ctx context.Context, failed bool) error {
	cc := cacheOf(ctx)
	if cc == nil {
		return nil
	}
	cc.mu.Lock()
	refs := cc.deferred
	if failed {
		refs = append(refs, cc.batched...)
	}
	cc.deferring, cc.deferred, cc.batched = false, nil, nil
	cc.mu.Unlock()
	if len(refs) == 0 {
		return nil
	}
	return st.applyBatch(ctx, st.s, store.TokenBatch{Delete: refs})
}

// deferDelete queues ref when deferring outside a transaction.
func (cc *clientCache) deferDelete(ctx context.Context, ref store.TokenRef) bool {
	if cc == nil || txOf(ctx) != nil {
		return false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.deferring {
		return false
	}
	cc.deferred = append(cc.deferred, ref)
	delete(cc.rows, ref)
	return true
}

// takeDeferred moves the pending deletions into a batch.
func (cc *clientCache) takeDeferred() []store.TokenRef {
	if cc == nil {
		return nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	refs := cc.deferred
	cc.batched = append(cc.batched, refs...)
	cc.deferred = nil
	return refs
}

// Prefetch reads, in one statement, what a token request for clientID
// presenting token (a code or a refresh token, by kind; signature is
// fosite's signature of it) will ask for: the client, the session with its
// request's PKCE and OpenID sessions or its link. It fills ctx's request
// cache (see WithClientCache) and does nothing without one or when the
// store cannot; an error leaves the cache as it was, and the regular reads
// follow.
func (st *Store) Prefetch(ctx context.Context, clientID string, kind store.TokenKind, signature string) {
	cc := cacheOf(ctx)
	pf, ok := st.s.(store.TokenPrefetcher)
	if cc == nil || !ok || clientID == "" || signature == "" || txOf(ctx) != nil {
		return
	}
	var also []store.TokenKind
	if kind == store.KindAuthorizeCode {
		also = []store.TokenKind{store.KindPKCE, store.KindOpenID}
	}
	sigHash := store.HashSecret(signature)
	p, err := pf.PrefetchTokenRequest(ctx, clientID, kind, sigHash, also...)
	if err != nil {
		return
	}
	if p.ClientFound {
		SeedClient(ctx, p.Client)
	}
	if len(p.Sessions) == 0 {
		return
	}
	cc.put(p.Sessions...)
	if kind == store.KindRefreshToken {
		cc.mu.Lock()
		if cc.links == nil {
			cc.links = map[store.TokenRef]store.LinkState{}
		}
		cc.links[store.TokenRef{Kind: kind, SignatureHash: sigHash}] = p.Link
		cc.mu.Unlock()
	}
}

// rowLink returns a prefetched session and its link state.
func (cc *clientCache) rowLink(ref store.TokenRef) (store.TokenSession, store.LinkState, bool) {
	if cc == nil {
		return store.TokenSession{}, store.LinkState{}, false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	t, ok := cc.rows[ref]
	l, lok := cc.links[ref]
	return t, l, ok && lok
}

func cacheOf(ctx context.Context) *clientCache {
	cc, _ := ctx.Value(clientCacheKey{}).(*clientCache)
	return cc
}

func (cc *clientCache) row(ref store.TokenRef) (store.TokenSession, bool) {
	if cc == nil {
		return store.TokenSession{}, false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	t, ok := cc.rows[ref]
	return t, ok
}

func (cc *clientCache) put(ts ...store.TokenSession) {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.rows == nil {
		cc.rows = map[store.TokenRef]store.TokenSession{}
	}
	for _, t := range ts {
		cc.rows[store.TokenRef{Kind: t.Kind, SignatureHash: t.SignatureHash}] = t
	}
}

func (cc *clientCache) forget(ref store.TokenRef) {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	delete(cc.rows, ref)
	delete(cc.links, ref)
}

// companion returns the cached session of kind belonging to requestID.
func (cc *clientCache) companion(kind store.TokenKind, requestID string) (store.TokenRef, bool) {
	if cc == nil {
		return store.TokenRef{}, false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for ref, t := range cc.rows {
		if ref.Kind == kind && t.RequestID == requestID {
			return ref, true
		}
	}
	return store.TokenRef{}, false
}

func (cc *clientCache) clearRows() {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	clear(cc.rows)
	clear(cc.links)
}

func (cc *clientCache) markGone(ref store.TokenRef) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.gone == nil {
		cc.gone = map[store.TokenRef]bool{}
	}
	cc.gone[ref] = true // still served from rows: fosite reads it after the commit
}

func (cc *clientCache) isGone(ref store.TokenRef) bool {
	if cc == nil {
		return false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.gone[ref]
}

// WithClientCache returns a context in which GetClient reads each client
// from the database at most once. fosite looks the client up once to
// authenticate it and again for every stored request it loads (a code
// exchange reads the code twice, the PKCE and the OpenID session once
// each); one HTTP request is short enough that its view of a client need
// not change halfway.
func WithClientCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, clientCacheKey{}, &clientCache{m: map[string]store.Client{}})
}

// SeedClient records a client the caller already read in the context's
// cache (see WithClientCache).
func SeedClient(ctx context.Context, c store.Client) {
	if cc, _ := ctx.Value(clientCacheKey{}).(*clientCache); cc != nil {
		cc.mu.Lock()
		cc.m[c.ID] = c
		cc.mu.Unlock()
	}
}

func (st *Store) loadClient(ctx context.Context, id string) (store.Client, error) {
	cc, _ := ctx.Value(clientCacheKey{}).(*clientCache)
	if cc != nil {
		cc.mu.Lock()
		c, ok := cc.m[id]
		cc.mu.Unlock()
		if ok {
			return c, nil
		}
	}
	c, err := st.s.GetClient(ctx, id)
	if err == nil && cc != nil {
		cc.mu.Lock()
		cc.m[id] = c
		cc.mu.Unlock()
	}
	return c, err
}

// GetClient implements fosite.ClientManager. A disabled client is not found.
func (st *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	c, err := st.loadClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if c.Disabled {
		return nil, fosite.ErrNotFound
	}
	fc := &Client{C: c, Audience: st.opts.Audience}
	if r, _ := ctx.Value(redirectKey{}).(string); r != "" && clients.MatchRedirect(c.RedirectURIs, r) {
		fc.extraRedirect = r
	}
	return fc, nil
}

// ClientAssertionJWTValid implements fosite.ClientManager; Linkslot accepts
// no client assertions, so every jti is unknown.
func (st *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager (unused).
func (st *Store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// SecretHasher compares client secrets with clients.CompareSecret.
type SecretHasher struct{}

// Compare implements fosite.Hasher.
func (SecretHasher) Compare(_ context.Context, hash, data []byte) error {
	if clients.CompareSecret(string(hash), string(data)) {
		return nil
	}
	return errors.New("client secret mismatch")
}

// Hash implements fosite.Hasher.
func (SecretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	h, err := clients.HashSecret(string(data))
	return []byte(h), err
}

// storedRequest is the JSON form of a fosite request.
type storedRequest struct {
	ID                string          `json:"id"`
	RequestedAt       time.Time       `json:"requested_at"`
	ClientID          string          `json:"client_id"`
	RequestedScopes   []string        `json:"requested_scopes"`
	GrantedScopes     []string        `json:"granted_scopes"`
	RequestedAudience []string        `json:"requested_audience"`
	GrantedAudience   []string        `json:"granted_audience"`
	Form              url.Values      `json:"form"`
	Session           json.RawMessage `json:"session"`
}

func sessionOf(r fosite.Requester) (*Session, error) {
	s, ok := r.GetSession().(*Session)
	if !ok || s == nil {
		return nil, fmt.Errorf("fositestore: session is %T, want *fositestore.Session", r.GetSession())
	}
	return s, nil
}

// Encode serializes a request (exported for tests).
func Encode(r fosite.Requester) ([]byte, error) {
	sess, err := sessionOf(r)
	if err != nil {
		return nil, err
	}
	rawSess, err := json.Marshal(sess)
	if err != nil {
		return nil, err
	}
	sr := storedRequest{ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		RequestedScopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: r.GetRequestForm(), Session: rawSess}
	return json.Marshal(sr)
}

// decode rebuilds a request; the client is loaded fresh, so a deleted or
// disabled client makes every stored token unusable.
func (st *Store) decode(ctx context.Context, raw []byte, into fosite.Session) (*fosite.Request, error) {
	var sr storedRequest
	if err := json.Unmarshal(raw, &sr); err != nil {
		return nil, fmt.Errorf("fositestore: decode request: %w", err)
	}
	c, err := st.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, err
	}
	// Like fosite's SQL stores, the stored session is decoded into the
	// caller's session: fosite sets expiries on it between two reads of
	// the same code, and those must survive the second read.
	sess, ok := into.(*Session)
	if !ok || sess == nil {
		sess = &Session{}
	}
	if len(sr.Session) > 0 {
		if err := json.Unmarshal(sr.Session, sess); err != nil {
			return nil, fmt.Errorf("fositestore: decode session: %w", err)
		}
	}
	if sr.Form == nil {
		sr.Form = url.Values{}
	}
	return &fosite.Request{ID: sr.ID, RequestedAt: sr.RequestedAt, Client: c,
		RequestedScope: sr.RequestedScopes, GrantedScope: sr.GrantedScopes,
		RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: sr.Form, Session: sess}, nil
}

func (st *Store) create(ctx context.Context, kind store.TokenKind, signature string, r fosite.Requester, exp time.Time) error {
	sess, err := sessionOf(r)
	if err != nil {
		return err
	}
	raw, err := Encode(r)
	if err != nil {
		return err
	}
	if exp.IsZero() {
		exp = st.opts.Clock().Add(24 * time.Hour)
	}
	t := store.TokenSession{Kind: kind, SignatureHash: store.HashSecret(signature),
		RequestID: r.GetID(), ClientID: r.GetClient().GetID(), AccountID: sess.Subject, LinkID: sess.LinkID,
		Active: true, Request: raw, ExpiresAt: exp, CreatedAt: st.opts.Clock()}
	if st.fast != nil {
		return st.write(ctx, store.TokenBatch{Create: []store.TokenSession{t}})
	}
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	return db.CreateTokenSession(ctx, t)
}

// load reads a session row: from the request's cache when it was read
// already; a code is read together with its PKCE and OpenID sessions.
func (st *Store) load(ctx context.Context, kind store.TokenKind, sigHash string) (store.TokenSession, error) {
	cc := cacheOf(ctx)
	ref := store.TokenRef{Kind: kind, SignatureHash: sigHash}
	if t, ok := cc.row(ref); ok {
		return t, nil
	}
	db, err := st.db(ctx)
	if err != nil {
		return store.TokenSession{}, err
	}
	if f, ok := db.(store.FastTokens); ok && cc != nil && kind == store.KindAuthorizeCode {
		rows, err := f.GetRequestTokenSessions(ctx, kind, sigHash, store.KindPKCE, store.KindOpenID)
		if err != nil {
			return store.TokenSession{}, err
		}
		cc.put(rows...)
		return rows[0], nil
	}
	t, err := db.GetTokenSession(ctx, kind, sigHash)
	if err == nil {
		cc.put(t)
	}
	return t, err
}

// get loads a session row; inactive rows are returned with active=false.
func (st *Store) get(ctx context.Context, kind store.TokenKind, signature string, into fosite.Session) (*fosite.Request, store.TokenSession, error) {
	ts, err := st.load(ctx, kind, store.HashSecret(signature))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ts, fosite.ErrNotFound
	}
	if err != nil {
		return nil, ts, err
	}
	req, err := st.decode(ctx, ts.Request, into)
	if err != nil {
		return nil, ts, err
	}
	return req, ts, nil
}

func (st *Store) del(ctx context.Context, kind store.TokenKind, signature string) error {
	ref := store.TokenRef{Kind: kind, SignatureHash: store.HashSecret(signature)}
	cc := cacheOf(ctx)
	if cc.isGone(ref) {
		return nil
	}
	cc.forget(ref)
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	err = db.DeleteTokenSession(ctx, kind, ref.SignatureHash)
	if errors.Is(err, store.ErrNotFound) {
		return fosite.ErrNotFound
	}
	return err
}

// CreateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (st *Store) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	return st.create(ctx, store.KindAuthorizeCode, code, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (st *Store) GetAuthorizeCodeSession(ctx context.Context, code string, s fosite.Session) (fosite.Requester, error) {
	req, ts, err := st.get(ctx, store.KindAuthorizeCode, code, s)
	if err != nil {
		return nil, err
	}
	if !ts.Active {
		return req, fosite.ErrInvalidatedAuthorizeCode
	}
	if !st.opts.Clock().Before(ts.ExpiresAt) {
		return nil, fosite.ErrNotFound
	}
	return req, nil
}

// InvalidateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage: the
// one conditional UPDATE that makes a code single-use. The loser of a race
// answers fosite.ErrInvalidatedAuthorizeCode.
//
// With batches, the OpenID session of the same request (read with the
// code) is deleted in the same statement; fosite's later delete of it is
// then a no-op.
func (st *Store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	ref := store.TokenRef{Kind: store.KindAuthorizeCode, SignatureHash: store.HashSecret(code)}
	cc := cacheOf(ctx)
	if st.fast != nil {
		b := store.TokenBatch{Deactivate: []store.TokenRef{ref}}
		if t, ok := cc.row(ref); ok && st.batch(ctx) != nil {
			if oidc, ok := cc.companion(store.KindOpenID, t.RequestID); ok {
				b.Delete = append(b.Delete, oidc)
				cc.markGone(oidc)
			}
		}
		if st.batch(ctx) != nil {
			b.Delete = append(b.Delete, cc.takeDeferred()...)
		}
		cc.forget(ref)
		return st.write(ctx, b)
	}
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	err = db.DeactivateTokenSession(ctx, store.KindAuthorizeCode, ref.SignatureHash)
	switch {
	case errors.Is(err, store.ErrConflict):
		return fosite.ErrInvalidatedAuthorizeCode
	case errors.Is(err, store.ErrNotFound):
		return fosite.ErrNotFound
	}
	return err
}

// CreateAccessTokenSession implements oauth2.AccessTokenStorage.
func (st *Store) CreateAccessTokenSession(ctx context.Context, sig string, r fosite.Requester) error {
	return st.create(ctx, store.KindAccessToken, sig, r, r.GetSession().GetExpiresAt(fosite.AccessToken))
}

// GetAccessTokenSession implements oauth2.AccessTokenStorage; a revoked or
// expired access token is not found.
func (st *Store) GetAccessTokenSession(ctx context.Context, sig string, s fosite.Session) (fosite.Requester, error) {
	req, ts, err := st.get(ctx, store.KindAccessToken, sig, s)
	if err != nil {
		return nil, err
	}
	if !ts.Active || !st.opts.Clock().Before(ts.ExpiresAt) {
		return nil, fosite.ErrNotFound
	}
	return req, nil
}

// DeleteAccessTokenSession implements oauth2.AccessTokenStorage.
func (st *Store) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.KindAccessToken, sig)
}

// CreateRefreshTokenSession implements oauth2.RefreshTokenStorage. The
// expiry is capped at the family's absolute lifetime.
func (st *Store) CreateRefreshTokenSession(ctx context.Context, sig, _ string, r fosite.Requester) error {
	sess, err := sessionOf(r)
	if err != nil {
		return err
	}
	exp := sess.GetExpiresAt(fosite.RefreshToken)
	if st.opts.RefreshAbsolute > 0 && !sess.GrantedAt.IsZero() {
		if limit := sess.GrantedAt.Add(st.opts.RefreshAbsolute); exp.IsZero() || exp.After(limit) {
			exp = limit
			sess.SetExpiresAt(fosite.RefreshToken, exp)
		}
	}
	return st.create(ctx, store.KindRefreshToken, sig, r, exp)
}

// GetRefreshTokenSession implements oauth2.RefreshTokenStorage. A used
// (rotated or revoked) token answers its request with
// fosite.ErrInactiveToken, so fosite revokes the family; a token whose link
// was revoked, or that expired, is not found.
func (st *Store) GetRefreshTokenSession(ctx context.Context, sig string, s fosite.Session) (fosite.Requester, error) {
	var (
		ts   store.TokenSession
		link store.LinkState
		err  error
	)
	ref := store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: store.HashSecret(sig)}
	db, err := st.db(ctx)
	if err != nil {
		return nil, err
	}
	f, fast := db.(store.FastTokens)
	var cached bool
	if ts, link, cached = cacheOf(ctx).rowLink(ref); cached {
		fast = true // read with Prefetch
	} else if fast {
		// The session and its link in one statement.
		ts, link, err = f.GetTokenSessionLink(ctx, store.KindRefreshToken, ref.SignatureHash)
	} else {
		ts, err = db.GetTokenSession(ctx, store.KindRefreshToken, store.HashSecret(sig))
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	req, err := st.decode(ctx, ts.Request, s)
	if err != nil {
		return nil, err
	}
	if !ts.Active {
		return req, fosite.ErrInactiveToken
	}
	if !st.opts.Clock().Before(ts.ExpiresAt) {
		return nil, fosite.ErrNotFound
	}
	if ts.LinkID != "" {
		if !fast {
			l, err := st.s.GetLink(ctx, ts.LinkID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			link = store.LinkState{Found: err == nil, Status: l.Status, LastUsedAt: l.LastUsedAt}
		}
		if !link.Found || link.Status != store.LinkActive {
			return nil, fosite.ErrNotFound
		}
		// Record use for the Connected apps page, at most once an hour
		// per link (best-effort).
		if now := st.opts.Clock(); now.Sub(link.LastUsedAt) > TouchEvery {
			_ = st.s.TouchLink(ctx, ts.LinkID, now)
		}
	}
	return req, nil
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (st *Store) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.KindRefreshToken, sig)
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: it consumes the
// presented refresh token with one conditional UPDATE; of two concurrent
// rotations exactly one wins, the other answers fosite.ErrInactiveToken.
func (st *Store) RotateRefreshToken(ctx context.Context, _ string, sig string) error {
	ref := store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: store.HashSecret(sig)}
	cacheOf(ctx).forget(ref)
	if st.fast != nil {
		return st.write(ctx, store.TokenBatch{Deactivate: []store.TokenRef{ref}})
	}
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	err = db.DeactivateTokenSession(ctx, store.KindRefreshToken, ref.SignatureHash)
	switch {
	case errors.Is(err, store.ErrConflict):
		return fosite.ErrInactiveToken
	case errors.Is(err, store.ErrNotFound):
		return fosite.ErrNotFound
	}
	return err
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage: every refresh
// token of the family.
func (st *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	cacheOf(ctx).clearRows()
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	return db.DeactivateRequest(ctx, store.KindRefreshToken, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage: every access
// token of the family.
func (st *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	cacheOf(ctx).clearRows()
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	return db.DeactivateRequest(ctx, store.KindAccessToken, requestID)
}

// CreatePKCERequestSession implements pkce.PKCERequestStorage.
func (st *Store) CreatePKCERequestSession(ctx context.Context, sig string, r fosite.Requester) error {
	return st.create(ctx, store.KindPKCE, sig, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetPKCERequestSession implements pkce.PKCERequestStorage.
func (st *Store) GetPKCERequestSession(ctx context.Context, sig string, s fosite.Session) (fosite.Requester, error) {
	req, _, err := st.get(ctx, store.KindPKCE, sig, s)
	return req, err
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
// Between BeginDeferral and EndDeferral the deletion joins the batch that
// redeems the code (or is written by EndDeferral).
func (st *Store) DeletePKCERequestSession(ctx context.Context, sig string) error {
	ref := store.TokenRef{Kind: store.KindPKCE, SignatureHash: store.HashSecret(sig)}
	if st.fast != nil && cacheOf(ctx).deferDelete(ctx, ref) {
		return nil
	}
	return st.del(ctx, store.KindPKCE, sig)
}

// CreateOpenIDConnectSession implements openid.OpenIDConnectRequestStorage.
func (st *Store) CreateOpenIDConnectSession(ctx context.Context, code string, r fosite.Requester) error {
	return st.create(ctx, store.KindOpenID, code, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetOpenIDConnectSession implements openid.OpenIDConnectRequestStorage.
func (st *Store) GetOpenIDConnectSession(ctx context.Context, code string, r fosite.Requester) (fosite.Requester, error) {
	req, _, err := st.get(ctx, store.KindOpenID, code, r.GetSession())
	if errors.Is(err, fosite.ErrNotFound) {
		return nil, openid.ErrNoSessionFound
	}
	return req, err
}

// DeleteOpenIDConnectSession implements openid.OpenIDConnectRequestStorage.
func (st *Store) DeleteOpenIDConnectSession(ctx context.Context, code string) error {
	return st.del(ctx, store.KindOpenID, code)
}
