package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	jose3 "github.com/go-jose/go-jose/v3"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/openid"
	"github.com/ory/fosite/token/jwt"
	json "github.com/segmentio/encoding/json"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
)

// Lifetimes fixed by the contract.
const (
	AccessTokenLifespan   = fositestore.AccessTokenLifespan
	IDTokenLifespan       = 15 * time.Minute
	AuthorizeCodeLifespan = 60 * time.Second
)

// Config is what the provider needs to know.
type Config struct {
	Issuer string
	// Secret keys the HMAC of codes and refresh tokens (derived with HKDF).
	Secret      []byte
	RefreshIdle time.Duration
	// JWKS configures the fetch of the key sets of private_key_jwt clients.
	JWKS JWKSOptions
	// Now is the clock for client-assertion checks (default time.Now).
	Now func() time.Time
}

// Provider is the composed fosite provider and its configuration.
type Provider struct {
	fosite.OAuth2Provider
	Config *fosite.Config
	Signer *Signer

	store *fositestore.Store
	core  oauth2.CoreStrategy
}

// NewAccessRequest is fosite's, after reading in one statement what it is
// about to ask the storage for one by one (fositestore.Store.Prefetch): the
// client and the presented code (with its PKCE and OpenID sessions) or
// refresh token (with its link). fosite then validates everything as
// usual; the prefetch only saves round trips.
func (p *Provider) NewAccessRequest(ctx context.Context, r *http.Request, session fosite.Session) (fosite.AccessRequester, error) {
	if p.store != nil && r.Method == http.MethodPost {
		if err := r.ParseForm(); err == nil {
			clientID := r.PostForm.Get("client_id")
			if id, _, ok := r.BasicAuth(); ok {
				if u, err := url.QueryUnescape(id); err == nil {
					clientID = u
				}
			}
			switch r.PostForm.Get("grant_type") {
			case "refresh_token":
				fositestore.RefreshGrant(ctx)
				if t := r.PostForm.Get("refresh_token"); t != "" {
					p.store.Prefetch(ctx, clientID, store.KindRefreshToken, t, p.core.RefreshTokenSignature(ctx, t))
				}
			case "authorization_code":
				if c := r.PostForm.Get("code"); c != "" {
					p.store.Prefetch(ctx, clientID, store.KindAuthorizeCode, c, p.core.AuthorizeCodeSignature(ctx, c))
				}
			}
		}
		p.store.BeginDeferral(ctx)
	}
	ar, err := p.OAuth2Provider.NewAccessRequest(ctx, r, session)
	if err != nil && p.store != nil {
		if ferr := p.store.EndDeferral(ctx, true); ferr != nil {
			return ar, fosite.ErrServerError.WithWrap(ferr).WithDebug(ferr.Error())
		}
	}
	return ar, err
}

// NewAccessResponse is fosite's; the PKCE-session deletion deferred by
// NewAccessRequest has joined the batch that redeemed the code, or is
// written now (fositestore.Store.EndDeferral). A refresh answered within
// the refresh grace carries the presented token's successor rather than
// the refresh token fosite generated (never stored); one whose token was
// found used only at commit answers invalid_grant, as fosite answers reuse
// it reads (fositestore's grace.go).
func (p *Provider) NewAccessResponse(ctx context.Context, ar fosite.AccessRequester) (fosite.AccessResponder, error) {
	resp, err := p.OAuth2Provider.NewAccessResponse(ctx, ar)
	if p.store != nil {
		if ferr := p.store.EndDeferral(ctx, err != nil); ferr != nil && err == nil {
			return nil, fosite.ErrServerError.WithWrap(ferr).WithDebug(ferr.Error())
		}
	}
	if err != nil && fositestore.Reused(ctx) {
		return nil, fosite.ErrInvalidGrant.WithWrap(err).WithHint("The refresh token was already used.").
			WithDebug("Refresh token re-use was detected. All related tokens have been revoked.")
	}
	if successor, ok := fositestore.GraceAnswer(ctx); ok && err == nil {
		resp.SetExtra("refresh_token", successor)
	}
	return resp, err
}

// notingRefresh is the core strategy, telling the store each refresh
// token it generates (fositestore.NoteRefreshToken): a rotation seals it
// into the row of the token it spends, for the refresh grace.
type notingRefresh struct{ oauth2.CoreStrategy }

func (s notingRefresh) GenerateRefreshToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := s.CoreStrategy.GenerateRefreshToken(ctx, r)
	if err == nil {
		fositestore.NoteRefreshToken(ctx, token)
	}
	return token, sig, err
}

// New composes the provider on storage fs with keys from km.
func New(fs *fositestore.Store, km *keys.Manager, c Config) (*Provider, error) {
	if c.Issuer == "" || len(c.Secret) == 0 {
		return nil, errors.New("provider: issuer and secret are required")
	}
	global, err := hkdf.Key(sha256.New, c.Secret, []byte("linkslot-fosite"), "linkslot fosite hmac v1", 32)
	if err != nil {
		return nil, err
	}
	if c.RefreshIdle <= 0 {
		c.RefreshIdle = 30 * 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	cfg := &fosite.Config{
		AccessTokenLifespan:            AccessTokenLifespan,
		AuthorizeCodeLifespan:          AuthorizeCodeLifespan,
		IDTokenLifespan:                IDTokenLifespan,
		RefreshTokenLifespan:           c.RefreshIdle,
		IDTokenIssuer:                  c.Issuer,
		AccessTokenIssuer:              c.Issuer,
		TokenURL:                       c.Issuer + "/oauth2/token",
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.ExactAudienceMatchingStrategy,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		RefreshTokenScopes:             []string{}, // refresh for every client allowed the grant
		JWTScopeClaimKey:               jwt.JWTScopeFieldString,
		ClientSecretsHasher:            fositestore.SecretHasher{},
		GlobalSecret:                   global,
		SendDebugMessagesToClients:     false,
		OmitRedirectScopeParam:         true,
		RedirectSecureChecker: func(_ context.Context, u *url.URL) bool {
			return clients.ValidateRedirectURI(u.String()) == nil
		},
		JWKSFetcherStrategy: newJWKSFetcher(c.JWKS),
	}
	signer := &Signer{km: km}
	signer.DefaultSigner = jwt.DefaultSigner{GetPrivateKey: signer.privateKey}
	hmac := compose.NewOAuth2HMACStrategy(cfg)
	core := &oauth2.DefaultJWTStrategy{Signer: signer, HMACSHAStrategy: hmac, Config: cfg}
	if fs != nil {
		fs.UseCodeSignature(core.AuthorizeCodeSignature)
		fs.UseRefreshSignature(core.RefreshTokenSignature)
	}
	strategy := &compose.CommonStrategy{
		CoreStrategy:               notingRefresh{core},
		OpenIDConnectTokenStrategy: &openid.DefaultStrategy{Signer: signer, Config: cfg},
		Signer:                     signer,
	}
	p := compose.Compose(cfg, fs, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2PKCEFactory,
		compose.OpenIDConnectExplicitFactory,
		// A refresh answers a new ID token when openid was granted, as
		// Hydra, Dex and Keycloak do: relying parties such as kubectl's OIDC
		// plugin keep a session by refreshing and read the new ID token.
		// It costs one more ES256 signature per rotation (README "Tokens").
		compose.OpenIDConnectRefreshFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
	)
	for i, h := range cfg.TokenEndpointHandlers {
		cfg.TokenEndpointHandlers[i] = ownGrantOnly{h}
	}
	if f, ok := p.(*fosite.Fosite); ok {
		cfg.ClientAuthenticationStrategy = authenticateClient(f, c.Now)
		f.Config = &tokenURLs{Config: cfg, urls: []string{cfg.TokenURL, c.Issuer}}
	}
	return &Provider{OAuth2Provider: p, Config: cfg, Signer: signer, store: fs, core: core}, nil
}

// ownGrantOnly asks a token endpoint handler to populate a response only
// for a grant it handles. fosite asks every handler to populate every
// response, and each one that does not handle the grant answers
// ErrUnknownRequest with a stack trace attached (errorsx.WithStack): two
// stack walks per token request, thrown away, about 3% of a refresh
// rotation's CPU. fosite's own handlers check CanHandleTokenEndpointRequest
// first, so this answers what they would, without the walk.
type ownGrantOnly struct{ fosite.TokenEndpointHandler }

func (h ownGrantOnly) PopulateTokenEndpointResponse(ctx context.Context, r fosite.AccessRequester, w fosite.AccessResponder) error {
	if !h.CanHandleTokenEndpointRequest(ctx, r) {
		return fosite.ErrUnknownRequest
	}
	return h.TokenEndpointHandler.PopulateTokenEndpointResponse(ctx, r, w)
}

// Signer is fosite's jwt.Signer on keys.Manager: it signs with the current
// key (kid set) and verifies with whichever published key the token's kid
// names, so tokens survive a rotation.
type Signer struct {
	jwt.DefaultSigner
	km *keys.Manager
}

var _ jwt.Signer = (*Signer)(nil)

// Generate signs claims as a compact ES256 JWS with the current key: the
// header is header's fields over {"typ":"JWT"} (typ "at+jwt" for access
// tokens), with alg ES256 and the current key's kid whatever header says,
// since that is the key that signs; the payload is claims as JSON. It is
// what fosite's DefaultSigner makes through go-jose's builder, without the
// builder's round trip (it encodes the claims, decodes them into a map and
// encodes that again) and its signer set-up per token: a third of the cost
// of a token beyond its signature (TestGenerateMatchesFosite checks the
// two agree).
func (s *Signer) Generate(ctx context.Context, claims jwt.MapClaims, header jwt.Mapper) (string, string, error) {
	if claims == nil || header == nil {
		return "", "", errors.New("jwt: claims and header are required")
	}
	kid, priv, err := s.km.Current(ctx)
	if err != nil {
		return "", "", err
	}
	h := map[string]any{"typ": jwt.JWTHeaderTypeValue}
	for k, v := range header.ToMap() {
		h[k] = v
	}
	h["alg"], h["kid"] = string(jose3.ES256), kid
	hb, err := json.Marshal(h)
	if err != nil {
		return "", "", fmt.Errorf("jwt: header: %w", err)
	}
	cb, err := json.Marshal(map[string]any(claims))
	if err != nil {
		return "", "", fmt.Errorf("jwt: claims: %w", err)
	}
	enc := base64.RawURLEncoding
	hl, cl := enc.EncodedLen(len(hb)), enc.EncodedLen(len(cb))
	out := make([]byte, hl+1+cl+1+enc.EncodedLen(64))
	enc.Encode(out, hb)
	out[hl] = '.'
	enc.Encode(out[hl+1:], cb)
	signing := out[:hl+1+cl]
	digest := sha256.Sum256(signing)
	r, sv, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		return "", "", fmt.Errorf("jwt: sign: %w", err)
	}
	var sig [64]byte
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	out[len(signing)] = '.'
	enc.Encode(out[len(signing)+1:], sig[:])
	token := string(out)
	return token, token[len(signing)+1:], nil
}

func (s *Signer) privateKey(ctx context.Context) (any, error) {
	kid, priv, err := s.km.Current(ctx)
	if err != nil {
		return nil, err
	}
	return &jose3.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(jose3.ES256), Use: "sig"}, nil
}

// Decode verifies a token against the published key its kid names.
func (s *Signer) Decode(ctx context.Context, token string) (*jwt.Token, error) {
	return jwt.Parse(token, func(t *jwt.Token) (any, error) {
		if t.Method != jose3.ES256 {
			return nil, fmt.Errorf("unexpected signing method %v", t.Method)
		}
		kid, _ := t.Header["kid"].(string)
		pub, err := s.km.PublicKey(ctx, kid)
		if err != nil {
			return nil, err
		}
		return pub, nil
	})
}

// Validate verifies a token and returns its signature.
func (s *Signer) Validate(ctx context.Context, token string) (string, error) {
	if _, err := s.Decode(ctx, token); err != nil {
		return "", err
	}
	return s.GetSignature(ctx, token)
}
