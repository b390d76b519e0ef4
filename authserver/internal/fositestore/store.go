package fositestore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	jose3 "github.com/go-jose/go-jose/v3"
	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/openid"
	"github.com/ory/fosite/handler/pkce"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/keys"
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
	// URLClients resolves clients whose id is the URL of a client ID
	// metadata document (nil: such ids are unknown).
	URLClients *cimd.Resolver
	// RefreshGrace is how long after its rotation a refresh token
	// presented again is answered with its successor, while that is
	// unused (grace.go; 0: off, every reuse revokes the family). It needs
	// Seal, which seals the successors, and UseRefreshSignature.
	RefreshGrace time.Duration
	Seal         *keys.Sealer
	// The token endpoint's fast paths (doc.go) are on unless turned off
	// here; Begin sets up the per-request state they need, and
	// provider.Provider calls it for every request. NoReadCache reads
	// every storage call from the database instead of the request's read
	// cache, Prefetch included (readcache.go); NoJoinedDeletes deletes a
	// code's PKCE and OpenID sessions with statements of their own
	// instead of in the batch that redeems it (joined.go). The servers
	// leave both off; a test turns them on to measure the slow paths.
	NoReadCache, NoJoinedDeletes bool
}

// Backend is the part of store.Store that fosite's storage uses.
type Backend interface {
	GetClient(ctx context.Context, id string) (store.Client, error)
	TouchLink(ctx context.Context, id string, now time.Time) error
	store.Tokens
	store.ClientAssertions
	Begin(ctx context.Context) (store.Tx, error)
}

var _ Backend = store.Store(nil)

// Store is fosite's storage on top of a Backend.
type Store struct {
	s    Backend
	opts Options
	// codeSignature is fosite's signature of a code (UseCodeSignature).
	codeSignature func(ctx context.Context, code string) string
	// refreshSignature is fosite's signature of a refresh token
	// (UseRefreshSignature).
	refreshSignature func(ctx context.Context, token string) string
}

var (
	_ fosite.ClientManager               = (*Store)(nil)
	_ oauth2.CoreStorage                 = (*Store)(nil)
	_ oauth2.TokenRevocationStorage      = (*Store)(nil)
	_ pkce.PKCERequestStorage            = (*Store)(nil)
	_ openid.OpenIDConnectRequestStorage = (*Store)(nil)
	_ fosite.Hasher                      = SecretHasher{}
	_ fosite.Client                      = (*Client)(nil)
	_ fosite.OpenIDConnectClient         = (*KeyClient)(nil)
)

// New returns the fosite storage.
func New(s Backend, opts Options) *Store {
	if opts.Clock == nil {
		opts.Clock = store.SystemClock
	}
	return &Store{s: s, opts: opts}
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

// IDTokenSignedResponseAlg is the algorithm the client chose for its ID
// tokens ("" for the server's default); provider.IDTokenAlgClient.
func (c *Client) IDTokenSignedResponseAlg() string { return c.C.IDTokenSignedResponseAlg }

// KeyClient is a client that authenticates with private_key_jwt (RFC
// 7523): a URL client whose document asks for it, or a registered client
// given a jwks_uri. fosite's own client-assertion code verifies it against
// Keys or the set at KeysURI.
type KeyClient struct {
	*Client
	Keys    *jose3.JSONWebKeySet
	KeysURI string
	// Alg is the algorithm fosite requires of the assertion: the
	// document's token_endpoint_auth_signing_alg, else the one the
	// presented assertion names when it is ES256 or RS256 (see
	// WithAssertionAlg).
	Alg string
}

func (c *KeyClient) IsPublic() bool                               { return false }
func (c *KeyClient) GetHashedSecret() []byte                      { return nil }
func (c *KeyClient) GetRequestURIs() []string                     { return nil }
func (c *KeyClient) GetJSONWebKeys() *jose3.JSONWebKeySet         { return c.Keys }
func (c *KeyClient) GetJSONWebKeysURI() string                    { return c.KeysURI }
func (c *KeyClient) GetRequestObjectSigningAlgorithm() string     { return "" }
func (c *KeyClient) GetTokenEndpointAuthMethod() string           { return cimd.AuthPrivateKeyJWT }
func (c *KeyClient) GetTokenEndpointAuthSigningAlgorithm() string { return c.Alg }

type assertionAlgKey struct{}

// WithAssertionAlg tells GetClient the algorithm of the client assertion
// the current request presents (already checked to be ES256 or RS256).
// provider.Provider's client authentication sets it from the assertion
// itself; no handler does.
func WithAssertionAlg(ctx context.Context, alg string) context.Context {
	return context.WithValue(ctx, assertionAlgKey{}, alg)
}

func keyClient(ctx context.Context, c *Client, keys *jose3.JSONWebKeySet, uri, docAlg string) *KeyClient {
	alg := docAlg
	if alg == "" {
		alg, _ = ctx.Value(assertionAlgKey{}).(string)
	}
	if alg == "" {
		alg = "ES256"
	}
	return &KeyClient{Client: c, Keys: keys, KeysURI: uri, Alg: alg}
}

type redirectKey struct{}

// WithRequestedRedirect tells GetClient which redirect URI the current
// request names, so a loopback URI with another port can be accepted.
// provider.Provider's NewAuthorizeRequest sets it from the request's
// redirect_uri; no handler does.
func WithRequestedRedirect(ctx context.Context, redirect string) context.Context {
	return context.WithValue(ctx, redirectKey{}, redirect)
}

// TouchEvery is how stale a link's last-used time may get before a use
// records it again.
const TouchEvery = time.Hour

// loadClient reads a client, at most once per request (readCache).
func (st *Store) loadClient(ctx context.Context, id string) (store.Client, error) {
	rc := readsOf(ctx)
	if c, ok := rc.client(id); ok {
		return c, nil
	}
	c, err := st.s.GetClient(ctx, id)
	if err == nil {
		rc.putClient(c)
	}
	return c, err
}

// urlClient resolves a client ID metadata document client under the
// policy; any refusal is fosite.ErrNotFound (invalid_client at the token
// endpoint; the authorize endpoint shows the refusal itself).
func (st *Store) urlClient(ctx context.Context, id string) (fosite.Client, error) {
	rc := readsOf(ctx)
	c, ok := rc.urlClient(id)
	if !ok {
		var err error
		if c, err = st.opts.URLClients.Lookup(ctx, id); err != nil {
			var ref *cimd.Refusal
			if errors.As(err, &ref) {
				return nil, fosite.ErrNotFound.WithWrap(err).WithDebug(ref.Rule)
			}
			return nil, err
		}
		rc.putURLClient(c)
	}
	fc := &Client{C: c.Client, Audience: st.opts.Audience}
	if r, _ := ctx.Value(redirectKey{}).(string); r != "" && clients.MatchRedirect(c.RedirectURIs, r) {
		fc.extraRedirect = r
	}
	if c.Doc.AuthMethod() == cimd.AuthPrivateKeyJWT {
		return keyClient(ctx, fc, c.Doc.Keys, c.Doc.JWKSURI, c.Doc.SigningAlg), nil
	}
	return fc, nil
}

// GetClient implements fosite.ClientManager. A disabled client is not found.
func (st *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if cimd.IsURL(id) {
		return st.urlClient(ctx, id)
	}
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
	if c.JWKSURI != "" {
		return keyClient(ctx, fc, nil, c.JWKSURI, ""), nil
	}
	return fc, nil
}

// ClientAssertionJWTValid implements fosite.ClientManager. It answers nil
// without reading anything: fosite calls SetClientAssertionJWT right after
// it on the same path, and that unique insert is what makes a jti
// single-use (a used one answers fosite.ErrJTIKnown there). Reading first
// would cost every private_key_jwt token request a statement, and fosite
// reports any error of this method as a used jti, so a database failure
// would have reached the client as invalid_client instead of
// server_error.
func (st *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager: it records the
// jti until exp with a unique insert, so of two replicas presented the same
// assertion at once only one accepts it.
func (st *Store) SetClientAssertionJWT(ctx context.Context, jti string, exp time.Time) error {
	err := st.s.UseClientAssertion(ctx, store.HashSecret("jti:"+jti), exp, st.opts.Clock())
	if errors.Is(err, store.ErrAlreadyExists) {
		return fosite.ErrJTIKnown.WithHint("Claim 'jti' from 'client_assertion' MUST only be used once.")
	}
	return err
}

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
	ID                string     `json:"id"`
	RequestedAt       time.Time  `json:"requested_at"`
	ClientID          string     `json:"client_id"`
	RequestedScopes   []string   `json:"requested_scopes"`
	GrantedScopes     []string   `json:"granted_scopes"`
	RequestedAudience []string   `json:"requested_audience"`
	GrantedAudience   []string   `json:"granted_audience"`
	Form              url.Values `json:"form"`
	// Session is encoded and decoded in the same pass as the request (the
	// JSON is what a separately marshalled session would give).
	Session *Session `json:"session"`
	// PKCEForm and OpenIDForm are the forms of a code's PKCE and OpenID
	// sessions when they are kept in the code's own row (fold.go); nil
	// for every other row, and for a code whose companions are rows of
	// their own.
	PKCEForm   url.Values `json:"pkce_form,omitempty"`
	OpenIDForm url.Values `json:"openid_form,omitempty"`
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
	sr, err := storedOf(r)
	if err != nil {
		return nil, err
	}
	// segmentio/encoding/json writes the bytes encoding/json writes
	// (TestEncodeAsEncodingJSON) in under half the time, with half the
	// allocations (BenchmarkStoredRequest); encoding/json/v2's
	// forerunner with version 1's options takes 1.7 times segmentio's.
	return fastjson.Marshal(sr)
}

// v1Options give encoding/json's semantics to go-json-experiment/json.
var v1Options = jsonv1.DefaultOptionsV1()

// decodeStored decodes a stored request into sr, merging into the maps
// and structs sr already holds as encoding/json does (decode relies on
// it). It uses go-json-experiment/json, the design that became
// encoding/json/v2, with version 1's options, so it accepts and gives
// what encoding/json does (TestDecodeAsEncodingJSON) in two thirds of
// the time with half the allocations (BenchmarkStoredRequest); a code
// exchange decodes several. segmentio's decoder, whose encoder writes
// them, allocates a large map for each JSON object it decodes into one,
// seven times the garbage.
func decodeStored(raw []byte, sr *storedRequest) error {
	return jsonv2.Unmarshal(raw, sr, v1Options)
}

// storedOf is the stored form of r.
func storedOf(r fosite.Requester) (storedRequest, error) {
	sess, err := sessionOf(r)
	if err != nil {
		return storedRequest{}, err
	}
	return storedRequest{ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		RequestedScopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: r.GetRequestForm(), Session: sess}, nil
}

// decode rebuilds a request; the client is loaded fresh, so a deleted or
// disabled client makes every stored token unusable.
func (st *Store) decode(ctx context.Context, raw []byte, into fosite.Session) (*fosite.Request, error) {
	req, _, err := st.decodeWith(ctx, raw, into)
	return req, err
}

// decodeWith is decode, also answering the companions kept in a code's row.
func (st *Store) decodeWith(ctx context.Context, raw []byte, into fosite.Session) (*fosite.Request, companions, error) {
	// Like fosite's SQL stores, the stored session is decoded into the
	// caller's session: fosite sets expiries on it between two reads of
	// the same code, and those must survive the second read.
	sess, ok := into.(*Session)
	if !ok || sess == nil {
		sess = &Session{}
	}
	sr := storedRequest{Session: sess}
	if err := decodeStored(raw, &sr); err != nil {
		return nil, companions{}, fmt.Errorf("fositestore: decode request: %w", err)
	}
	c, err := st.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, companions{}, err
	}
	if sr.Form == nil {
		sr.Form = url.Values{}
	}
	return &fosite.Request{ID: sr.ID, RequestedAt: sr.RequestedAt, Client: c,
		RequestedScope: sr.RequestedScopes, GrantedScope: sr.GrantedScopes,
		RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: sr.Form, Session: sess}, companions{pkce: sr.PKCEForm, openid: sr.OpenIDForm}, nil
}

func (st *Store) create(ctx context.Context, kind store.TokenKind, signature string, r fosite.Requester, exp time.Time) error {
	sess, err := sessionOf(r)
	if err != nil {
		return err
	}
	ts := txOf(ctx)
	if kind == store.KindPKCE || kind == store.KindOpenID {
		if folded, err := ts.fold(kind, store.HashSecret(signature), r, sess); folded || err != nil {
			return err
		}
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
	if kind == store.KindAuthorizeCode && ts != nil {
		return ts.addCode(t, r, sess)
	}
	return st.write(ctx, store.TokenBatch{Create: []store.TokenSession{t}})
}

// load reads a session row: from the request's cache when it was read
// already; a code is read together with its PKCE session, which fosite
// keys by the same signature (its OpenID session is keyed by the code,
// which fosite does not pass here, and is read when asked for).
func (st *Store) load(ctx context.Context, kind store.TokenKind, sigHash string) (store.TokenSession, error) {
	rc := readsOf(ctx)
	if t, ok := rc.session(store.TokenRef{Kind: kind, SignatureHash: sigHash}); ok {
		return t, nil
	}
	db, err := st.db(ctx)
	if err != nil {
		return store.TokenSession{}, err
	}
	if rc != nil && kind == store.KindAuthorizeCode {
		rows, err := db.GetRequestTokenSessions(ctx, kind, sigHash, store.TokenRef{Kind: store.KindPKCE, SignatureHash: sigHash})
		if err != nil {
			return store.TokenSession{}, err
		}
		rc.putSessions(rows...)
		return rows[0], nil
	}
	t, err := db.GetTokenSession(ctx, kind, sigHash)
	if err == nil {
		rc.putSessions(t)
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
	if joinedOf(ctx).isDone(ref) {
		return nil
	}
	readsOf(ctx).forget(ref)
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
// Inside a transaction the deactivation joins its batch, and so do the
// deletions of the request's OpenID session (read with the code) and of its
// deferred PKCE session (see joinedDeletes); fosite's later delete of the
// OpenID session is then a no-op.
func (st *Store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	ref := store.TokenRef{Kind: store.KindAuthorizeCode, SignatureHash: store.HashSecret(code)}
	rc, jd := readsOf(ctx), joinedOf(ctx)
	b := store.TokenBatch{Deactivate: []store.TokenRef{ref}}
	if txOf(ctx) != nil {
		if t, ok := rc.session(ref); ok {
			if oidc, ok := rc.companion(store.KindOpenID, t.RequestID); ok && jd.join(oidc) {
				b.Delete = append(b.Delete, oidc)
			}
		}
		b.Delete = append(b.Delete, jd.take()...)
	}
	// A companion kept in the code's row is read after this (fold.go).
	rc.keepSpent(ref)
	rc.forget(ref)
	return st.write(ctx, b)
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
// expiry is capped at the family's absolute lifetime. A grace answer
// stores none: it answers the successor already stored (grace.go).
func (st *Store) CreateRefreshTokenSession(ctx context.Context, sig, _ string, r fosite.Requester) error {
	if refreshOf(ctx).current() != nil {
		return nil
	}
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
// fosite.ErrInactiveToken, so fosite revokes the family, unless it is
// answered from its successor within the refresh grace (grace.go), which
// reads as an active token; a token whose link was revoked, or that
// expired, is not found.
func (st *Store) GetRefreshTokenSession(ctx context.Context, sig string, s fosite.Session) (fosite.Requester, error) {
	ref := store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: store.HashSecret(sig)}
	ts, link, err := st.loadWithLink(ctx, ref)
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
		db, err := st.db(ctx)
		if err != nil {
			return nil, err
		}
		g, err := st.graceFor(ctx, db, ts)
		if err != nil {
			return nil, err
		}
		if g == nil {
			return req, fosite.ErrInactiveToken
		}
		refreshOf(ctx).answer(g)
	}
	if !st.opts.Clock().Before(ts.ExpiresAt) {
		return nil, fosite.ErrNotFound
	}
	if ts.LinkID != "" {
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

// loadWithLink reads a session and its link in one statement, or from the
// read cache when Prefetch read them.
func (st *Store) loadWithLink(ctx context.Context, ref store.TokenRef) (store.TokenSession, store.LinkState, error) {
	if ts, link, ok := readsOf(ctx).sessionLink(ref); ok {
		return ts, link, nil
	}
	db, err := st.db(ctx)
	if err != nil {
		return store.TokenSession{}, store.LinkState{}, err
	}
	return db.GetTokenSessionLink(ctx, ref.Kind, ref.SignatureHash)
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (st *Store) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return st.del(ctx, store.KindRefreshToken, sig)
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: it consumes the
// presented refresh token with one conditional UPDATE; of two concurrent
// rotations exactly one wins, the other answers fosite.ErrInactiveToken
// (or, within the refresh grace, becomes a grace answer at commit). With
// the grace on, the UPDATE also records the rotation and the sealed
// successor. A grace answer spends nothing: its batch requires the
// successor to be still active instead (grace.go).
func (st *Store) RotateRefreshToken(ctx context.Context, _ string, sig string) error {
	ref := store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: store.HashSecret(sig)}
	rc := readsOf(ctx)
	rc.forget(ref)
	if g := refreshOf(ctx).graceOf(ref); g != nil {
		return st.write(ctx, store.TokenBatch{Require: []store.TokenRef{g.next}})
	}
	return st.write(ctx, store.TokenBatch{Deactivate: []store.TokenRef{ref}, Rotation: st.rotation(ctx, ref)})
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage: every refresh
// token of the family.
func (st *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	readsOf(ctx).forgetSessions()
	db, err := st.db(ctx)
	if err != nil {
		return err
	}
	return db.DeactivateRequest(ctx, store.KindRefreshToken, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage: every access
// token of the family.
func (st *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	readsOf(ctx).forgetSessions()
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

// GetPKCERequestSession implements pkce.PKCERequestStorage: the session
// kept in its code's row while the code is unused (fold.go), or its own
// row.
func (st *Store) GetPKCERequestSession(ctx context.Context, sig string, s fosite.Session) (fosite.Requester, error) {
	ref := store.TokenRef{Kind: store.KindPKCE, SignatureHash: store.HashSecret(sig)}
	rc := readsOf(ctx)
	if _, own := rc.session(ref); !own {
		k, found, err := st.folded(ctx, ref.SignatureHash, s)
		if err != nil {
			return nil, err
		}
		if found && k.pkce != nil {
			if !k.active || k.spentHere {
				return nil, fosite.ErrNotFound
			}
			rc.markFolded(ref)
			return withForm(k.req, k.pkce), nil
		}
	}
	req, _, err := st.get(ctx, store.KindPKCE, sig, s)
	return req, err
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
// Between BeginDeferral and EndDeferral the deletion joins the batch that
// redeems the code (or is written by EndDeferral). A session kept in its
// code's row is used up with the code (fold.go).
func (st *Store) DeletePKCERequestSession(ctx context.Context, sig string) error {
	ref := store.TokenRef{Kind: store.KindPKCE, SignatureHash: store.HashSecret(sig)}
	rc, jd := readsOf(ctx), joinedOf(ctx)
	if rc.isFolded(ref) {
		jd.deferUseUp(ctx, store.TokenRef{Kind: store.KindAuthorizeCode, SignatureHash: ref.SignatureHash})
		return nil
	}
	if jd.deferDelete(ctx, ref) {
		rc.forget(ref)
		return nil
	}
	err := st.del(ctx, store.KindPKCE, sig)
	if errors.Is(err, fosite.ErrNotFound) && st.keptIn(ctx, ref.SignatureHash).pkce != nil {
		return nil
	}
	return err
}

// CreateOpenIDConnectSession implements openid.OpenIDConnectRequestStorage.
func (st *Store) CreateOpenIDConnectSession(ctx context.Context, code string, r fosite.Requester) error {
	return st.create(ctx, store.KindOpenID, code, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

// GetOpenIDConnectSession implements openid.OpenIDConnectRequestStorage:
// the session kept in its code's row (fold.go), or its own row.
func (st *Store) GetOpenIDConnectSession(ctx context.Context, code string, r fosite.Requester) (fosite.Requester, error) {
	ref := store.TokenRef{Kind: store.KindOpenID, SignatureHash: store.HashSecret(code)}
	rc := readsOf(ctx)
	if _, own := rc.session(ref); !own {
		if sigHash, ok := st.codeHashOf(ctx, code); ok {
			k, found, err := st.folded(ctx, sigHash, r.GetSession())
			if err != nil {
				return nil, err
			}
			if found && k.openid != nil {
				// As its own row would be: there until the code's
				// redemption, which deletes it, and read in the
				// redeeming request after that.
				if !k.active && !k.spentHere {
					return nil, openid.ErrNoSessionFound
				}
				rc.markFolded(ref)
				return withForm(k.req, k.openid), nil
			}
		}
	}
	req, _, err := st.get(ctx, store.KindOpenID, code, r.GetSession())
	if errors.Is(err, fosite.ErrNotFound) {
		return nil, openid.ErrNoSessionFound
	}
	return req, err
}

// DeleteOpenIDConnectSession implements openid.OpenIDConnectRequestStorage;
// a session kept in its code's row goes with the code (fold.go).
func (st *Store) DeleteOpenIDConnectSession(ctx context.Context, code string) error {
	ref := store.TokenRef{Kind: store.KindOpenID, SignatureHash: store.HashSecret(code)}
	if readsOf(ctx).isFolded(ref) {
		return nil
	}
	err := st.del(ctx, store.KindOpenID, code)
	if errors.Is(err, fosite.ErrNotFound) {
		if sigHash, ok := st.codeHashOf(ctx, code); ok && st.keptIn(ctx, sigHash).openid != nil {
			return nil
		}
	}
	return err
}
