package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/linkslot/linkslot/internal/metrics"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/ory/fosite/storage"

	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/admission"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// Store is the part of store.Store the handlers read and write directly;
// fosite's storage is the provider's.
type Store interface {
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	GetActiveLink(ctx context.Context, accountID, clientID string) (store.Link, error)
	GetClientLink(ctx context.Context, clientID, accountID string) (store.Client, *store.Link, error)
	TouchLink(ctx context.Context, id string, now time.Time) error
}

var _ Store = store.Store(nil)

// Transactional is fosite's storage.Transactional that also hands out the
// database transaction it opens, seen as ApprovalTx, so that an approval
// commits with the code it leads to (fositestore.Store, narrowed by the
// server's wiring).
type Transactional interface {
	storage.Transactional
	TxStore(ctx context.Context) (ApprovalTx, error)
}

// ApprovalTx is what a consent approval writes in the transaction that
// stores the code it leads to: the record of an open-policy client at its
// first approval, and the approval itself (identity.ApproveTx).
type ApprovalTx interface {
	CreateClient(ctx context.Context, c store.Client) error
	identity.ApproveTx
}

var _ ApprovalTx = store.Store(nil)

// Deps are the handlers' explicit dependencies.
type Deps struct {
	Provider *provider.Provider
	Store    Store
	// Keys are the token keys the JWKS publishes (ES256 and RS256).
	Keys   keys.Set
	UI     consent.AuthorizeUI
	Log    *slog.Logger
	Clock  store.Clock
	Issuer string
	// Resources are the configured resource URIs; the first is the default.
	Resources []string
	// Tx groups the writes of one authorization response (the approval's
	// link, the code, PKCE and OpenID sessions) into one transaction.
	Tx Transactional
	// Approvals record a person's consent (the zero value sends no e-mail).
	Approvals identity.Approvals
	// Metrics counts token issuance by grant and outcome (nil: off).
	Metrics *metrics.Metrics
	// URLClients resolves clients identified by a client ID metadata
	// document URL (docs/reference.md §10); nil or policy off refuses them.
	URLClients *cimd.Resolver
	// Registrations, when set (LINKSLOT_DCR_POLICY=open), serves dynamic
	// client registration at PathRegister and advertises it.
	Registrations *dcr.Service
	// AllowedOrigins are the browser origins the token, revocation and
	// userinfo endpoints answer (LINKSLOT_ALLOWED_ORIGINS); Development
	// adds every loopback origin.
	AllowedOrigins []string
	Development    bool
	// Gate admits the database-bound OAuth requests (authorize, token,
	// revocation, introspection, userinfo) a few at a time, first come,
	// first served (nil: all at once).
	Gate *admission.Gate
}

// Handler serves the OAuth endpoints.
type Handler struct {
	d Deps
}

// Paths of the endpoints, relative to the issuer.
const (
	PathAuthorize  = "/oauth2/authorize"
	PathToken      = "/oauth2/token"
	PathRevoke     = "/oauth2/revoke"
	PathIntrospect = "/oauth2/introspect"
	PathUserinfo   = "/userinfo"
	PathJWKS       = "/jwks.json"
)

// New returns the handler.
func New(d Deps) *Handler {
	if d.Clock == nil {
		d.Clock = store.SystemClock
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Handler{d: d}
}

// Mount registers every route on mux.
func (h *Handler) Mount(mux *http.ServeMux) {
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", PathJWKS} {
		mux.HandleFunc("OPTIONS "+p, publicPreflight)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", publicCORS(h.discovery))
	mux.HandleFunc("GET /.well-known/openid-configuration", publicCORS(h.discovery))
	mux.HandleFunc("GET "+PathJWKS, publicCORS(h.jwks))
	// The gate sits inside the CORS wrappers of the token, revocation and
	// userinfo endpoints, so that a browser client can read a 503's
	// Retry-After.
	gate := h.d.Gate.Handler
	mux.HandleFunc("GET "+PathAuthorize, gate(h.authorize))
	mux.HandleFunc("POST "+PathAuthorize, gate(h.authorize))
	for _, p := range []string{PathToken, PathRevoke, PathUserinfo} {
		mux.HandleFunc("OPTIONS "+p, h.endpointPreflight)
	}
	mux.HandleFunc("POST "+PathToken, h.endpointCORS(gate(h.token)))
	mux.HandleFunc("POST "+PathRevoke, h.endpointCORS(gate(h.revoke)))
	mux.HandleFunc("POST "+PathIntrospect, gate(h.introspect))
	mux.HandleFunc("GET "+PathUserinfo, h.endpointCORS(gate(h.userinfo)))
	mux.HandleFunc("POST "+PathUserinfo, h.endpointCORS(gate(h.userinfo)))
	h.mountRegistration(mux)
}

// Metadata is the discovery document (RFC 8414; the same body serves
// OpenID Connect discovery). Besides the fields docs/reference.md §2 lists it carries
// the two OpenID Connect Discovery requires (subject types and the ID token
// signing algorithms, which must include RS256).
type Metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	IntrospectionEndpoint             string   `json:"introspection_endpoint"`
	UserinfoEndpoint                  string   `json:"userinfo_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	// docs/reference.md §10: absent when the metadata-document policy is off.
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	TokenEndpointAuthSigningAlgs      []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	// docs/reference.md §14: the prompt values accepted (others are
	// invalid_request) and the claims of ID tokens and userinfo.
	PromptValuesSupported []string `json:"prompt_values_supported"`
	ClaimsSupported       []string `json:"claims_supported"`
	// docs/reference.md §14: only under LINKSLOT_DCR_POLICY=open.
	RegistrationEndpoint string `json:"registration_endpoint,omitempty"`
}

// ClaimsSupported are the claims ID tokens and userinfo may carry.
var ClaimsSupported = []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "rat", "nonce", "at_hash", "email", "preferred_username", "updated_at"}

// DiscoveryDocument returns the metadata of an issuer; cimdSupported
// advertises client ID metadata documents (every policy but off).
// idTokenAlg, the algorithm of the ID tokens of clients that name none
// (LINKSLOT_ID_TOKEN_ALG), is listed first: the order means nothing to the
// specification, but a relying party that takes the first one gets the
// tokens it would get without asking.
func DiscoveryDocument(issuer string, cimdSupported bool, idTokenAlg string) Metadata {
	algs := []string{provider.AlgES256, provider.AlgRS256}
	if idTokenAlg == provider.AlgRS256 {
		algs = []string{provider.AlgRS256, provider.AlgES256}
	}
	return Metadata{
		Issuer:                            issuer,
		AuthorizationEndpoint:             issuer + PathAuthorize,
		TokenEndpoint:                     issuer + PathToken,
		JWKSURI:                           issuer + PathJWKS,
		RevocationEndpoint:                issuer + PathRevoke,
		IntrospectionEndpoint:             issuer + PathIntrospect,
		UserinfoEndpoint:                  issuer + PathUserinfo,
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
		TokenEndpointAuthSigningAlgs:      slices.Clone(cimd.SigningAlgs),
		ClientIDMetadataDocumentSupported: cimdSupported,
		AuthorizationResponseISSSupported: true,
		ScopesSupported:                   scope.Public(),
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  algs,
		PromptValuesSupported:             slices.Clone(PromptValues),
		ClaimsSupported:                   slices.Clone(ClaimsSupported),
	}
}

func (h *Handler) discovery(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	doc := DiscoveryDocument(h.d.Issuer, h.d.URLClients.Policy() != cimd.PolicyOff, h.d.Provider.IDTokenAlg)
	if h.d.Registrations != nil {
		doc.RegistrationEndpoint = h.d.Issuer + PathRegister
	}
	writeJSON(w, http.StatusOK, doc)
}

func (h *Handler) jwks(w http.ResponseWriter, r *http.Request) {
	body, err := h.d.Keys.PublicJWKS(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// resourceOK reports whether every requested resource is configured, and
// returns the one to use (the default when none was named).
func (h *Handler) resource(values []string) (string, bool) {
	if len(values) == 0 {
		return h.d.Resources[0], true
	}
	if len(values) > 1 {
		return "", false
	}
	if !slices.Contains(h.d.Resources, values[0]) {
		return "", false
	}
	return values[0], true
}

func (h *Handler) serverError(w http.ResponseWriter, r *http.Request, err error) {
	h.logError(r.Context(), r, err)
	writeJSONError(w, errServer)
}

func (h *Handler) logError(ctx context.Context, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	h.d.Log.ErrorContext(ctx, "request failed", "path", r.URL.Path, "err", safeErr(err))
}
