// Package authhttp builds the whole authorization server as one
// http.Handler: signing keys, fosite storage and provider, the OAuth
// endpoints, health endpoints, and the consent UI's pages when the UI
// provides them. It is the one constructor both the authserver command and
// other packages' end-to-end tests (the resource server's, for instance)
// mount — on a listener or on httptest.Server — so every caller gets exactly
// the production wiring.
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
// SecretKey, RefreshIdle, RefreshAbsolute) and UI are required.
type Deps struct {
	Store  store.Store
	Config config.Config
	// UI renders sign-in, consent and error pages. When it also has a
	// Mount(*http.ServeMux) method (consentui.UI does), its pages are
	// mounted on the same server; when it is an Approver, approvals go
	// through its identity service.
	UI consent.UI
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
	// Notifications deliver the outbox (this process runs a worker until
	// ctx ends); nil builds them from Config.
	Notifications *app.Notifications
	// Fetch tunes the fetches of client metadata documents and client key
	// sets (tests: a resolver and a test CA); the zero value is production.
	Fetch FetchOptions
	// Gate admits the OAuth endpoints' requests (package admission); nil
	// builds one of admission.Size slots for the store's pool
	// (sqlstore.Store.PoolSize).
	Gate *admission.Gate
}

// FetchOptions tune outside fetches (safefetch).
type FetchOptions struct {
	Resolver safefetch.Resolver
	RootCAs  *x509.CertPool
}

// Mounter is implemented by UIs that serve their own pages.
type Mounter interface{ Mount(*http.ServeMux) }

// Approver is implemented by UIs whose identity service records consent
// and e-mails the person when an app is connected (consentui.UI does);
// with other UIs approvals are recorded without e-mail.
type Approver interface{ Approvals() identity.Approvals }

// New builds the handler. It creates the first token signing key when none
// exists.
func New(ctx context.Context, d Deps) (http.Handler, error) {
	if d.Store == nil || d.UI == nil {
		return nil, errors.New("authhttp: Store and UI are required")
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
	if d.Notifications == nil {
		n, err := app.NewNotifications(c, d.Store, app.NotificationOptions{Clock: d.Clock, Metrics: d.Metrics.Registry(), Logger: d.Logger})
		if err != nil {
			return nil, fmt.Errorf("notifications: %w", err)
		}
		d.Notifications = n
	}
	go d.Notifications.Worker.Run(ctx)
	km := keys.NewManager(d.Store, c.SecretKey, store.KeyPurposeToken, d.Clock)
	if err := km.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	if _, err := km.SigningKey(ctx); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	policy, err := cimd.ParsePolicy(c.CIMDPolicy)
	if err != nil {
		return nil, fmt.Errorf("LINKSLOT_CIMD_POLICY %v", err)
	}
	urlClients := cimd.NewResolver(d.Store, cimd.Options{Policy: policy, OpenScopes: c.CIMDOpenScopes,
		Development: !c.Production, Resolver: d.Fetch.Resolver, RootCAs: d.Fetch.RootCAs, Observe: d.Metrics.ObserveFetch})
	fs := fositestore.New(d.Store, fositestore.Options{Audience: []string{c.Resource},
		RefreshAbsolute: c.RefreshAbsolute, Clock: d.Clock, URLClients: urlClients})
	p, err := provider.New(fs, km, provider.Config{Issuer: c.Issuer, Secret: c.SecretKey, RefreshIdle: c.RefreshIdle,
		JWKS: provider.JWKSOptions{Development: !c.Production, Resolver: d.Fetch.Resolver, RootCAs: d.Fetch.RootCAs, Observe: d.Metrics.ObserveFetch}})
	if err != nil {
		return nil, err
	}
	var approvals identity.Approvals
	if a, ok := d.UI.(Approver); ok {
		approvals = a.Approvals()
	}
	gate := d.Gate
	if gate == nil {
		gate = admission.New(admission.Size(poolSize(d.Store)), 0)
	}
	if r := d.Metrics.Registry(); r != nil {
		gate.Register(prometheus.WrapRegistererWith(prometheus.Labels{"service": "authserver"}, r))
	}
	mux := http.NewServeMux()
	endpoint.New(endpoint.Deps{Gate: gate, Provider: p, Store: d.Store, Keys: km, UI: d.UI, Log: d.Logger, Clock: d.Clock,
		Issuer: c.Issuer, Resources: []string{c.Resource}, Tx: fs, Approvals: approvals, Metrics: d.Metrics, URLClients: urlClients,
		AllowedOrigins: c.AllowedOrigins, Development: !c.Production}).Mount(mux)
	app.Health(mux, d.Store)
	if m, ok := d.UI.(Mounter); ok {
		m.Mount(mux)
	}
	if d.Mount != nil {
		d.Mount(mux)
	}
	feeds, err := feed.New(d.Store, c.SecretKey, c.Issuer, d.Clock)
	if err != nil {
		return nil, err
	}
	mux.Handle("GET /calendar/{token}", feeds.Handler())
	if !c.Production {
		// The development mailbox (CONTRACT §11); absent, so 404, in
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
	return requestid.Middleware(h), nil
}

// poolSize is the store's database pool size (sqlstore.Store.PoolSize), or
// the PostgreSQL default for a store that does not say.
func poolSize(s store.Store) int {
	if p, ok := s.(interface{ PoolSize() int }); ok && p.PoolSize() > 0 {
		return p.PoolSize()
	}
	return 16
}

// deadline bounds every request's work, database calls included
// (LINKSLOT_REQUEST_TIMEOUT), through its context.
func deadline(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
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
