// Package authhttp builds the whole authorization server as one
// http.Handler: signing keys, fosite storage and provider, the OAuth
// endpoints, health endpoints, and the consent UI's pages (Deps.Pages).
// Wire is the server's one wiring — the services built once
// (app.NewAuthServices), the consent UI over them, New, and the outbox
// worker — which both the authserver command and other packages'
// end-to-end tests (the resource server's, for instance) mount, on a
// listener or on httptest.Server, so every caller gets exactly the
// production wiring. New itself builds no service it is not given.
//
// Every request runs under LINKSLOT_REQUEST_TIMEOUT (its context's
// deadline) and a body limit: 1 MiB (MaxBodyBytes), a catalog import
// MaxImportBytes; a larger body answers 413 before any handler parses it.
//
// The OAuth endpoints (authorize, token, revocation, introspection,
// userinfo) run behind an admission gate of twice the database pool's
// connections (package admission): the requests beyond it wait in arrival
// order, and one that gets no turn within 5 s answers 503 with
// Retry-After.
package authhttp

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/authserver/internal/endpoint"
	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/admission"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
)

// Deps are the server's dependencies. Store, Config (Issuer, Resource,
// SecretKey, RefreshIdle, RefreshAbsolute), UI and Feeds are required;
// the server's wiring builds the services once (internal/app
// .NewAuthServices) and runs the outbox worker itself.
type Deps struct {
	Store  store.Store
	Config config.Config
	// UI renders sign-in, consent and error pages, and asks again for
	// prompt=login and max_age.
	UI consent.AuthorizeUI
	// Pages, when set, mounts the UI's own pages on the same server
	// (consentui.UI).
	Pages Mounter
	// Approvals records consent and e-mails the person when an app is
	// connected (the identity service's, identity.Service.Approvals); the
	// zero value records approvals without e-mail.
	Approvals identity.Approvals
	// Feeds serves the calendar feeds (GET /calendar/{token}).
	Feeds *feed.Feeds
	// DCRStore keeps dynamic registrations and the rate windows their
	// limit counts in (the *sqlstore.Store); required with
	// LINKSLOT_DCR_POLICY=open.
	DCRStore dcr.Store
	// Leases, when set (the *sqlstore.Store), run the job that declines
	// unanswered pending bookings (mutation.Expirer) in this process,
	// once across replicas; Wire starts it.
	Leases store.Leases
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics counts requests and token issuance (nil: off).
	Metrics *metrics.Metrics
	// Mount, when set, adds more routes to the server's mux (the admin
	// pages and API).
	Mount func(*http.ServeMux)
	// Clock defaults to store.SystemClock. fosite reads the system time for
	// its own expiry checks; the store checks stored expiries against Clock
	// as well, so a clock set ahead ages codes and tokens in tests.
	Clock store.Clock
	// Fetch tunes the fetches of client metadata documents and client key
	// sets (tests: a resolver and a test CA); the zero value is production.
	Fetch FetchOptions
	// Gate admits the OAuth endpoints' requests (package admission); nil
	// builds one of admission.Size slots for PoolSize.
	Gate *admission.Gate
	// PoolSize is the database pool's size (sqlstore.Store.PoolSize);
	// zero means PostgreSQL's default, 16.
	PoolSize int
}

// FetchOptions tune outside fetches (safefetch).
type FetchOptions struct {
	Resolver safefetch.Resolver
	RootCAs  *x509.CertPool
}

// Mounter is a UI that serves its own pages.
type Mounter interface{ Mount(*http.ServeMux) }

// New builds the handler. It creates the first token signing key when none
// exists.
func New(ctx context.Context, d Deps) (http.Handler, error) {
	if d.Store == nil || d.UI == nil {
		return nil, errors.New("authhttp: Store and UI are required")
	}
	if d.Feeds == nil {
		return nil, errors.New("authhttp: Feeds is required (the calendar feed service)")
	}
	c := d.Config
	if c.Issuer == "" || c.Resource == "" {
		return nil, errors.New("authhttp: Config.Issuer and Config.Resource are required")
	}
	if len(c.SecretKey) < 32 {
		return nil, errors.New("authhttp: Config.SecretKey must have at least 32 bytes")
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = store.SystemClock
	}
	if c.RefreshIdle <= 0 {
		c.RefreshIdle = 30 * 24 * time.Hour
	}
	// ES256 keys sign access tokens and ID tokens; RS256 keys the ID tokens
	// of clients that choose RS256. The JWKS publishes both.
	km := keys.NewManager(d.Store, c.SecretKey, store.KeyPurposeToken, d.Clock)
	rs := keys.NewManager(d.Store, c.SecretKey, store.KeyPurposeTokenRS256, d.Clock)
	tokenKeys := keys.Set{km, rs}
	if err := tokenKeys.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	for _, m := range tokenKeys {
		if _, err := m.SigningKey(ctx); err != nil {
			return nil, fmt.Errorf("signing keys: %w", err)
		}
	}
	policy, err := cimd.ParsePolicy(c.CIMDPolicy)
	if err != nil {
		return nil, fmt.Errorf("LINKSLOT_CIMD_POLICY %v", err)
	}
	urlClients := cimd.NewResolver(d.Store, cimd.Options{Policy: policy, OpenScopes: c.CIMDOpenScopes,
		Development: !c.Production, Resolver: d.Fetch.Resolver, RootCAs: d.Fetch.RootCAs, Observe: d.Metrics.ObserveFetch})
	fs := fositestore.New(d.Store, fositestore.Options{Audience: []string{c.Resource},
		RefreshAbsolute: c.RefreshAbsolute, Clock: d.Clock, URLClients: urlClients,
		RefreshGrace: c.RefreshGrace, Seal: keys.NewSealer(c.SecretKey, keys.PurposeRefreshSuccessor)})
	p, err := provider.New(fs, km, provider.Config{Issuer: c.Issuer, Secret: c.SecretKey, RefreshIdle: c.RefreshIdle,
		IDTokenAlg: c.IDTokenAlg, RS256Keys: rs,
		JWKS: provider.JWKSOptions{Development: !c.Production, Resolver: d.Fetch.Resolver, RootCAs: d.Fetch.RootCAs, Observe: d.Metrics.ObserveFetch}})
	if err != nil {
		return nil, err
	}
	approvals := d.Approvals
	gate := d.Gate
	if gate == nil {
		pool := d.PoolSize
		if pool <= 0 {
			pool = 16
		}
		gate = admission.New(admission.Size(pool), 0)
	}
	if r := d.Metrics.Registry(); r != nil {
		gate.Register(prometheus.WrapRegistererWith(prometheus.Labels{"service": "authserver"}, r))
	}
	registrations, err := newRegistrations(d.DCRStore, c, d.Clock)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	endpoint.New(endpoint.Deps{Registrations: registrations, Gate: gate, Provider: p, Store: d.Store, Keys: tokenKeys, UI: d.UI, Log: d.Logger, Clock: d.Clock,
		Issuer: c.Issuer, Resources: []string{c.Resource}, Tx: approvalTx{fs}, Approvals: approvals, Metrics: d.Metrics, URLClients: urlClients,
		AllowedOrigins: c.AllowedOrigins, Development: !c.Production}).Mount(mux)
	app.Health(mux, d.Store)
	if d.Pages != nil {
		d.Pages.Mount(mux)
	}
	if d.Mount != nil {
		d.Mount(mux)
	}
	mux.Handle("GET /calendar/{token}", d.Feeds.Handler())
	if !c.Production {
		// The development mailbox (docs/reference.md §11); absent, so 404, in
		// production.
		dev := mail.DevPage(c.MailDir())
		mux.Handle("GET /dev/mail", dev)
		mux.Handle("GET /dev/mail/{name}", dev)
	}
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = config.DefaultRequestTimeout
	}
	h := d.Metrics.HTTPMiddleware(metrics.MuxRoute(mux), recoverer(d.Logger, deadline(timeout, limitBodies(mux))))
	// Every per-address rule and log line below reads the client address
	// from the context (clientaddr.Of): the peer, or the client a trusted
	// proxy names.
	h = clientaddr.New(c.TrustedProxies, d.Logger).Middleware(h)
	return app.StrictTransport(c.Production, requestid.Middleware(h)), nil
}

// newRegistrations is dynamic client registration under
// LINKSLOT_DCR_POLICY=open (nil when off). Its rate limit is kept in the
// database's rate windows on either dialect, so replicas share it
// (docs/reference.md §13).
func newRegistrations(s dcr.Store, c config.Config, clock store.Clock) (*dcr.Service, error) {
	policy, err := dcr.ParsePolicy(c.DCRPolicy)
	if err != nil {
		return nil, fmt.Errorf("LINKSLOT_DCR_POLICY %v", err)
	}
	if policy == dcr.PolicyOff {
		return nil, nil
	}
	if s == nil {
		return nil, errors.New("authhttp: LINKSLOT_DCR_POLICY=open needs Deps.DCRStore (the store's registrations and rate windows)")
	}
	return dcr.New(s, dcr.Options{Scopes: c.DCRScopes, Rate: c.DCRRate, Clock: clock,
		ClientURI: func(id string) string { return endpoint.RegistrationClientURI(c.Issuer, id) }}), nil
}

// deadline bounds every request's work, database calls included
// (LINKSLOT_REQUEST_TIMEOUT), through its context; a catalog import has a
// deadline of its own, ImportTimeout, when that is longer.
func deadline(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := d
		if importPaths[r.URL.Path] && r.Method == http.MethodPost {
			limit = max(d, ImportTimeout)
			// The server's write timeout would cut the answer first.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(limit + 10*time.Second))
		}
		ctx, cancel := context.WithTimeout(r.Context(), limit)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// recoverer turns a panic into a logged 500 without the panic value in the
// response.
func recoverer(log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.ErrorContext(r.Context(), "panic serving request", "path", r.URL.Path, "panic", fmt.Sprintf("%T", v))
				http.Error(w, `{"error":"`+problem.CodeServerError+`"}`, http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// approvalTx is fositestore's transactions as the authorize endpoint sees
// them: TxStore narrowed from the whole store bound to the transaction to
// what a consent approval writes (endpoint.ApprovalTx).
type approvalTx struct{ *fositestore.Store }

func (a approvalTx) TxStore(ctx context.Context) (endpoint.ApprovalTx, error) {
	return a.Store.TxStore(ctx)
}
