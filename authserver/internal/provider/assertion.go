package provider

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	jose3 "github.com/go-jose/go-jose/v3"
	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/safefetch"
)

// Client assertions (private_key_jwt, RFC 7523 §2.2, docs/reference.md §10) are
// verified by fosite's own DefaultClientAuthenticationStrategy: signature
// against the client's JWKS, iss = sub = client_id, aud, exp, and the jti
// remembered by the store (fositestore.SetClientAssertionJWT, a unique
// insert shared by every replica). Around it Linkslot adds what fosite
// leaves open: only ES256 and RS256, an exp at most MaxAssertionLifetime
// ahead, and aud the issuer as well as the token endpoint.

// jwtBearer is RFC 7523's client_assertion_type.
const jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// MaxAssertionLifetime is how far ahead a client assertion's exp may be.
const MaxAssertionLifetime = 5 * time.Minute

// assertionLeeway absorbs clock skew between the client and this server.
const assertionLeeway = 30 * time.Second

var assertionAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.RS256}

// authenticateClient pre-checks a client assertion, then lets fosite
// authenticate the client as usual.
func authenticateClient(f *fosite.Fosite, now func() time.Time) fosite.ClientAuthenticationStrategy {
	return func(ctx context.Context, r *http.Request, form url.Values) (fosite.Client, error) {
		if form.Get("client_assertion_type") == jwtBearer && form.Get("client_assertion") != "" {
			tok, err := josejwt.ParseSigned(form.Get("client_assertion"), assertionAlgs)
			if err != nil {
				return nil, fosite.ErrInvalidClient.WithHint("The client_assertion must be a JWT signed with ES256 or RS256.")
			}
			var claims josejwt.Claims
			if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil {
				return nil, fosite.ErrInvalidClient.WithHint("The client_assertion's claims could not be read.")
			}
			if claims.Expiry == nil {
				return nil, fosite.ErrInvalidClient.WithHint("The client_assertion must carry exp.")
			}
			if claims.Expiry.Time().Before(now().Add(-assertionLeeway)) {
				// fosite reports an expired assertion as an internal error.
				return nil, fosite.ErrInvalidClient.WithHint("The client_assertion has expired.")
			}
			if claims.Expiry.Time().After(now().Add(MaxAssertionLifetime + assertionLeeway)) {
				return nil, fosite.ErrInvalidClient.WithHint("The client_assertion's exp must be at most 5 minutes ahead.")
			}
			ctx = fositestore.WithAssertionAlg(ctx, string(tok.Headers[0].Algorithm))
		}
		c, err := f.DefaultClientAuthenticationStrategy(ctx, r, form)
		// RFC 7523 §3.2: a refused assertion is invalid_client, whatever
		// fosite calls it (jti_known; invalid_request for a client that
		// has no keys or an unknown kid).
		var rfc *fosite.RFC6749Error
		switch {
		case err == nil || form.Get("client_assertion_type") == "":
		case errors.Is(err, fosite.ErrJTIKnown):
			return nil, fosite.ErrInvalidClient.WithHint("The client_assertion's jti was already used; every assertion is single-use.")
		case errors.As(err, &rfc) && rfc.ErrorField == fosite.ErrInvalidRequest.ErrorField:
			return nil, fosite.ErrInvalidClient.WithHint(rfc.HintField).WithWrap(err)
		}
		return c, err
	}
}

// tokenURLs is fosite's configuration with the issuer accepted as a client
// assertion audience beside the token endpoint.
type tokenURLs struct {
	*fosite.Config
	urls []string
}

func (c *tokenURLs) GetTokenURLs(context.Context) []string { return c.urls }

// JWKSOptions configure the fetch of client key sets.
type JWKSOptions struct {
	Development bool
	Resolver    safefetch.Resolver
	RootCAs     *x509.CertPool
	Observe     func(kind, outcome string)
}

// jwksFetcher is fosite's JWKSFetcherStrategy on safefetch: the fetch
// rules and cache of client metadata documents, with a 16 KiB limit (a set
// of a few RSA keys exceeds 5 KiB).
type jwksFetcher struct {
	f *safefetch.Fetcher[*jose3.JSONWebKeySet]
}

var _ fosite.JWKSFetcherStrategy = (*jwksFetcher)(nil)

// JWKSMaxBytes bounds a fetched client key set.
const JWKSMaxBytes = 16 << 10

func newJWKSFetcher(o JWKSOptions) *jwksFetcher {
	return &jwksFetcher{f: safefetch.New(safefetch.Options[*jose3.JSONWebKeySet]{
		Kind: "jwks", Development: o.Development, MaxBytes: JWKSMaxBytes,
		Resolver: o.Resolver, RootCAs: o.RootCAs, Observe: o.Observe,
		Decode: func(_ string, body []byte) (*jose3.JSONWebKeySet, error) {
			var set jose3.JSONWebKeySet
			if err := json.Unmarshal(body, &set); err != nil {
				return nil, errors.New("not a JSON Web Key Set")
			}
			if len(set.Keys) == 0 {
				return nil, errors.New("the key set is empty")
			}
			for i, k := range set.Keys {
				if !k.IsPublic() {
					return nil, errors.New("the key set holds a private key")
				}
				if k.Use == "" { // fosite considers only use=sig keys; use is optional (RFC 7517 §4.2)
					set.Keys[i].Use = "sig"
				}
			}
			return &set, nil
		},
	})}
}

// Resolve implements fosite.JWKSFetcherStrategy. fosite asks again with
// ignoreCache when the cached set lacks the assertion's key (a rotation).
func (j *jwksFetcher) Resolve(ctx context.Context, location string, ignoreCache bool) (*jose3.JSONWebKeySet, error) {
	if ignoreCache {
		j.f.Forget(location)
	}
	set, err := j.f.Get(ctx, location)
	if err != nil {
		return nil, fosite.ErrInvalidClient.WithHint("The client's JSON Web Key Set could not be fetched.").WithWrap(err).WithDebug(err.Error())
	}
	return set, nil
}

// AuthenticateClient is fosite's client authentication (secrets and client
// assertions alike), for endpoints whose fosite handler does not offer
// every method (introspection accepts only Basic credentials).
func (p *Provider) AuthenticateClient(ctx context.Context, r *http.Request, form url.Values) (fosite.Client, error) {
	f, ok := p.OAuth2Provider.(*fosite.Fosite)
	if !ok {
		return nil, fosite.ErrServerError.WithDebug("provider is not *fosite.Fosite")
	}
	return f.AuthenticateClient(p.begin(ctx), r, form)
}
