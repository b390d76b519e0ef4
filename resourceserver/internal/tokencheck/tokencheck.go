package tokencheck

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/time/rate"

	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// Errors returned by Verify; test with errors.Is.
var (
	// ErrInvalidToken: the token is malformed, forged, expired, for another
	// audience, or its link or client is no longer active.
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the link could not be checked (database down).
	ErrUnavailable = errors.New("token check unavailable")
)

// Identity is who a verified token speaks for.
type Identity struct {
	AccountID string   // sub
	ClientID  string   // client_id
	LinkID    string   // link_id
	Scopes    []string // scope, limited to what the link still grants
	TokenID   string   // jti
	Expiry    time.Time
}

type identityKey struct{}

// WithIdentity returns ctx carrying a verified identity. The router calls
// it once, after Verify; the tools read it with IdentityFrom.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the verified identity in ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok && id.AccountID != ""
}

// LinkSource is the narrow store view the checker needs: the link and
// client a token speaks through, and the token's own session, which the
// authorization server stores under the hash of the JWT's signature
// segment and switches inactive when it revokes the token (RFC 7009
// revocation, a reused authorization code, a reused refresh token, a
// revoked link).
type LinkSource interface {
	GetLink(ctx context.Context, id string) (store.Link, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	GetTokenSession(ctx context.Context, kind store.TokenKind, signatureHash string) (store.TokenSession, error)
}

// Options configure a Checker. Zero values mean the documented defaults.
type Options struct {
	Issuer   string // required: expected iss, no trailing slash
	Resource string // required: expected member of aud, byte for byte
	// JWKSURL defaults to Issuer + "/jwks.json".
	JWKSURL string
	// HTTPClient fetches the JWKS (default http.DefaultClient).
	HTTPClient *http.Client
	// KeySet replaces the remote JWKS (tests); JWKSURL and HTTPClient are
	// then unused.
	KeySet oidc.KeySet
	Links  LinkSource  // required
	Clock  store.Clock // default store.SystemClock
	// Skew tolerated on exp (default and at most MaxSkew, 5 s).
	Skew time.Duration
	// LinkTTL bounds how stale a cached link/client or token session
	// lookup may be (default 4 s, at most 5 s).
	LinkTTL time.Duration
	// RefetchInterval spaces JWKS refetches triggered by never-seen kids
	// after a burst of 3 (default 2 s).
	RefetchInterval time.Duration
}

// Checker verifies access tokens. It is safe for concurrent use.
type Checker struct {
	opts     Options
	verifier *oidc.IDTokenVerifier
	keys     *gatedKeySet

	mu     sync.Mutex
	links  map[string]linkEntry
	tokens map[[32]byte]verified
}

type linkEntry struct {
	link    store.Link
	client  store.Client
	err     error // ErrInvalidToken-wrapped when the link or client is gone
	fetched time.Time
}

// MaxSkew is the most a token may be past its exp and still be accepted
// (clock skew between the authorization and resource servers).
const MaxSkew = 5 * time.Second

// New builds a Checker. The JWKS is fetched lazily, on the first token.
func New(ctx context.Context, o Options) (*Checker, error) {
	var problems []string
	if o.Issuer == "" {
		problems = append(problems, "issuer is required")
	}
	if o.Resource == "" {
		problems = append(problems, "resource is required")
	}
	if o.Links == nil {
		problems = append(problems, "link source is required")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("tokencheck: %s", strings.Join(problems, "; "))
	}
	o.Issuer = strings.TrimSuffix(o.Issuer, "/")
	if o.Clock == nil {
		o.Clock = store.SystemClock
	}
	if o.Skew <= 0 || o.Skew > MaxSkew {
		o.Skew = MaxSkew
	}
	if o.LinkTTL <= 0 || o.LinkTTL > 5*time.Second {
		o.LinkTTL = 4 * time.Second
	}
	if o.RefetchInterval <= 0 {
		o.RefetchInterval = 2 * time.Second
	}
	ks := o.KeySet
	if ks == nil {
		if o.JWKSURL == "" {
			o.JWKSURL = o.Issuer + "/jwks.json"
		}
		kctx := context.WithoutCancel(ctx)
		if o.HTTPClient != nil {
			kctx = oidc.ClientContext(kctx, o.HTTPClient)
		}
		ks = oidc.NewRemoteKeySet(kctx, o.JWKSURL)
	}
	gated := newGatedKeySet(ks, o.RefetchInterval)
	clock, skew := o.Clock, o.Skew
	v := oidc.NewVerifier(o.Issuer, gated, &oidc.Config{
		ClientID:             o.Resource,
		SupportedSigningAlgs: []string{oidc.ES256},
		// go-oidc refuses exp < now; shifting now back by the skew
		// tolerates tokens that expired less than Skew ago.
		Now: func() time.Time { return clock().Add(-skew) },
	})
	return &Checker{opts: o, verifier: v, keys: gated, links: map[string]linkEntry{}, tokens: map[[32]byte]verified{}}, nil
}

type header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
}

type claims struct {
	Subject  string `json:"sub"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	LinkID   string `json:"link_id"`
	JTI      string `json:"jti"`
}

func parseHeader(raw string) (header, error) {
	var h header
	dot := strings.IndexByte(raw, '.')
	if dot <= 0 || strings.Count(raw, ".") != 2 {
		return h, errors.New("not a compact JWS")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw[:dot])
	if err != nil {
		return h, errors.New("header is not base64url")
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, errors.New("header is not JSON")
	}
	return h, nil
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, a...))
}

// Verify checks a raw bearer token and returns its identity.
func (c *Checker) Verify(ctx context.Context, raw string) (Identity, error) {
	cl, exp, err := c.verifyJWT(ctx, raw)
	if err != nil {
		return Identity{}, err
	}
	id, err := c.checkLink(ctx, cl, exp)
	if err != nil {
		return Identity{}, err
	}
	if err := c.checkSession(ctx, raw); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// verified is a token whose signature and claims were checked, with the
// last answer about its session.
type verified struct {
	cl  claims
	exp time.Time

	sessFetched time.Time // zero: the session was never read
	sessErr     error     // ErrInvalidToken-wrapped when revoked or unknown
}

// checkSession refuses a token whose access-token session the
// authorization server revoked or never stored. The answer is cached with
// the verified token for LinkTTL, so a revocation is honoured within
// LinkTTL at the cost of at most one query per token per LinkTTL.
func (c *Checker) checkSession(ctx context.Context, raw string) error {
	key := sha256.Sum256([]byte(raw))
	now := c.opts.Clock()
	c.mu.Lock()
	v, ok := c.tokens[key]
	c.mu.Unlock()
	if ok && !v.sessFetched.IsZero() && now.Sub(v.sessFetched) < c.opts.LinkTTL && !now.Before(v.sessFetched) {
		return v.sessErr
	}
	// fosite's JWT strategy names an access token by its signature
	// segment; the session row is keyed by that segment's hash.
	sig := raw[strings.LastIndexByte(raw, '.')+1:]
	var serr error
	ts, err := c.opts.Links.GetTokenSession(ctx, store.KindAccessToken, store.HashSecret(sig))
	switch {
	case errors.Is(err, store.ErrNotFound):
		serr = invalid("unknown token")
	case err != nil:
		return fmt.Errorf("%w: read token session: %w", ErrUnavailable, err)
	case !ts.Active:
		serr = invalid("token revoked")
	}
	if ok {
		c.mu.Lock()
		if cur, still := c.tokens[key]; still {
			cur.sessFetched, cur.sessErr = now, serr
			c.tokens[key] = cur
		}
		c.mu.Unlock()
	}
	return serr
}

// verifyJWT checks the JWT itself. Tokens that verified are remembered by
// their SHA-256 until they expire, so an agent's repeated calls cost one
// ECDSA verification per token, not per call; expiry is still compared
// with the clock on every call, and link status is checked separately.
func (c *Checker) verifyJWT(ctx context.Context, raw string) (claims, time.Time, error) {
	key := sha256.Sum256([]byte(raw))
	now := c.opts.Clock()
	c.mu.Lock()
	v, ok := c.tokens[key]
	c.mu.Unlock()
	if ok {
		if !now.Add(-c.opts.Skew).After(v.exp) {
			return v.cl, v.exp, nil
		}
		return claims{}, time.Time{}, invalid("token expired")
	}
	cl, exp, err := c.verifyJWTUncached(ctx, raw)
	if err != nil {
		return cl, exp, err
	}
	c.mu.Lock()
	if len(c.tokens) >= maxCachedTokens {
		for k, t := range c.tokens {
			if now.Add(-c.opts.Skew).After(t.exp) || len(c.tokens) >= maxCachedTokens {
				delete(c.tokens, k)
			}
		}
	}
	c.tokens[key] = verified{cl: cl, exp: exp}
	c.mu.Unlock()
	return cl, exp, nil
}

const maxCachedTokens = 50_000

func (c *Checker) verifyJWTUncached(ctx context.Context, raw string) (claims, time.Time, error) {
	var cl claims
	h, err := parseHeader(raw)
	if err != nil {
		return cl, time.Time{}, invalid("%v", err)
	}
	if typ := strings.ToLower(h.Typ); typ != "at+jwt" && typ != "application/at+jwt" {
		return cl, time.Time{}, invalid("header typ must be at+jwt")
	}
	if h.Alg != oidc.ES256 {
		return cl, time.Time{}, invalid("alg must be ES256")
	}
	tok, err := c.verifier.Verify(ctx, raw)
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return cl, time.Time{}, invalid("token expired")
		}
		return cl, time.Time{}, invalid("%v", err)
	}
	if err := tok.Claims(&cl); err != nil {
		return cl, time.Time{}, invalid("claims: %v", err)
	}
	if cl.Subject == "" || cl.ClientID == "" || cl.LinkID == "" {
		return cl, time.Time{}, invalid("sub, client_id and link_id are required")
	}
	return cl, tok.Expiry, nil
}

// checkLink applies the link and client checks to verified claims.
func (c *Checker) checkLink(ctx context.Context, cl claims, exp time.Time) (Identity, error) {
	tokScopes := scope.Parse(cl.Scope)
	e, err := c.lookup(ctx, cl.LinkID, false)
	if err == nil && !covered(e.link.Scopes, tokScopes) {
		// The token may come from a step-up that widened the link after
		// we cached it: read the link again before narrowing the token.
		e, err = c.lookup(ctx, cl.LinkID, true)
	}
	if err != nil {
		return Identity{}, err
	}
	if e.link.AccountID != cl.Subject || e.link.ClientID != cl.ClientID {
		return Identity{}, invalid("link does not match the token")
	}
	// A token never grants more than its link still does (a person who
	// re-consented to fewer scopes narrows older tokens too).
	var scopes []string
	for _, s := range tokScopes {
		if (s == scope.BookingsRead || s == scope.BookingsWrite) && !scope.Has(e.link.Scopes, s) {
			continue
		}
		scopes = append(scopes, s)
	}
	return Identity{
		AccountID: cl.Subject,
		ClientID:  cl.ClientID,
		LinkID:    cl.LinkID,
		Scopes:    scopes,
		TokenID:   cl.JTI,
		Expiry:    exp,
	}, nil
}

// lookup returns the link and its client, from the cache when fresh.
func (c *Checker) lookup(ctx context.Context, linkID string, fresh bool) (linkEntry, error) {
	now := c.opts.Clock()
	c.mu.Lock()
	e, ok := c.links[linkID]
	c.mu.Unlock()
	if ok && !fresh && now.Sub(e.fetched) < c.opts.LinkTTL && !now.Before(e.fetched) {
		return e, e.err
	}
	e = linkEntry{fetched: now}
	link, err := c.opts.Links.GetLink(ctx, linkID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		e.err = invalid("unknown link")
	case err != nil:
		return e, fmt.Errorf("%w: read link: %w", ErrUnavailable, err)
	case link.Status != store.LinkActive:
		e.err = invalid("link is not active")
	default:
		e.link = link
		client, err := c.opts.Links.GetClient(ctx, link.ClientID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			e.err = invalid("unknown client")
		case err != nil:
			return e, fmt.Errorf("%w: read client: %w", ErrUnavailable, err)
		case client.Disabled:
			e.err = invalid("client is disabled")
		default:
			e.client = client
		}
	}
	c.mu.Lock()
	if len(c.links) > 100_000 { // bound memory: drop everything stale
		for k, v := range c.links {
			if now.Sub(v.fetched) >= c.opts.LinkTTL {
				delete(c.links, k)
			}
		}
	}
	c.links[linkID] = e
	c.mu.Unlock()
	return e, e.err
}

// covered reports whether the link grants every booking scope the token
// names.
func covered(link, token []string) bool {
	for _, s := range token {
		if (s == scope.BookingsRead || s == scope.BookingsWrite) && !scope.Has(link, s) {
			return false
		}
	}
	return true
}

// Forget drops the cached state of a link (the next token re-reads it).
func (c *Checker) Forget(linkID string) {
	c.mu.Lock()
	delete(c.links, linkID)
	c.mu.Unlock()
}

// gatedKeySet lets tokens whose kid never verified reach the inner key set
// (which refetches the JWKS for unknown kids) only while a small token
// bucket allows: a burst of 3, then one every interval, on the wall clock.
// A rotation is absorbed by the burst; a stream of forged kids costs at most
// one JWKS fetch per interval.
type gatedKeySet struct {
	inner oidc.KeySet
	lim   *rate.Limiter

	mu    sync.RWMutex
	known map[string]bool

	fetchMu sync.Mutex
}

func newGatedKeySet(inner oidc.KeySet, interval time.Duration) *gatedKeySet {
	return &gatedKeySet{inner: inner, lim: rate.NewLimiter(rate.Every(interval), 3), known: map[string]bool{}}
}

func (g *gatedKeySet) isKnown(kid string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.known[kid]
}

func (g *gatedKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	h, err := parseHeader(jwt)
	if err != nil {
		return nil, err
	}
	if g.isKnown(h.Kid) {
		return g.inner.VerifySignature(ctx, jwt)
	}
	// Serialize first sightings: concurrent tokens with the same new kid
	// wait for one fetch and then find the kid known.
	g.fetchMu.Lock()
	defer g.fetchMu.Unlock()
	known := g.isKnown(h.Kid)
	if !known && !g.lim.Allow() {
		return nil, errors.New("unknown signing key")
	}
	payload, err := g.inner.VerifySignature(ctx, jwt)
	if err == nil && !known {
		g.mu.Lock()
		g.known[h.Kid] = true
		g.mu.Unlock()
	}
	return payload, err
}
