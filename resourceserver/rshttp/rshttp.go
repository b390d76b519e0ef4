// Package rshttp builds the whole resource server as one http.Handler, for
// the resourceserver binary, tests and the cluster harness: token checker,
// booking engine, grants, MCP tools, the SDK's stateless Streamable HTTP
// handler and the Echo router around them.
package rshttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/resourceserver/internal/ratelimit"
	"github.com/linkslot/linkslot/resourceserver/internal/router"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// Limit is a sustained rate per second and a burst.
type Limit struct {
	PerSecond float64
	Burst     int
}

// Default rate limits.
var (
	DefaultPerAddress = Limit{PerSecond: 100, Burst: 200} // before authentication, 429
	DefaultPerLink    = Limit{PerSecond: 20, Burst: 40}   // per connected link, rate_limited result
	// DefaultCallbacks: executed callback requests per link, 5 in any hour
	// (docs/reference.md §16).
	DefaultCallbacks = Limit{PerSecond: 5.0 / 3600, Burst: 5}
)

// Deps are the resource server's dependencies. Zero values of the optional
// fields mean the documented defaults.
type Deps struct {
	Store  store.Store   // required
	Config config.Config // required: Issuer, Resource, SecretKey (grant keys); AllowedOrigins
	Logger *slog.Logger  // default: discard; request ids are added to every record
	Clock  store.Clock   // default: store.SystemClock
	// HTTPClient fetches the issuer's JWKS (default http.DefaultClient).
	HTTPClient *http.Client
	// Auth replaces bearer verification against the issuer's JWKS
	// (tokencheck); the benchmarks' authentication-off baseline passes one
	// that accepts any well-formed bearer token (nil: tokencheck).
	Auth Authenticator

	// PerAddress and PerLink override the rate limits; NoRateLimits
	// switches both off (benchmarks).
	PerAddress, PerLink *Limit
	// Callbacks overrides the limit on executed callback requests per link
	// (DefaultCallbacks).
	Callbacks    *Limit
	NoRateLimits bool
	// OfferMinutes is how long a waitlist offer holds its slot (0: 30).
	OfferMinutes int
	// WaitlistEvery is how often this process passes lapsed waitlist
	// offers on (0: 5 s; negative: never, for tests that drive
	// WaitlistWorker themselves).
	WaitlistEvery time.Duration
	// RateWindows shares the limits with every replica through the
	// database (app.SharedRateWindows: PostgreSQL); nil keeps them in this
	// process (SQLite, and the benchmark's baseline for what sharing
	// costs).
	RateWindows store.RateWindows
	// Domain replaces the booking engine (the no-op benchmark baseline).
	Domain tools.Domain
	// Metrics counts HTTP requests, tool calls, bookings, replays and
	// refused grants (nil: off).
	Metrics *metrics.Metrics
	// Notifier writes the messages of every executed mutation in its
	// transaction (nil: Notifications.Notifier; see internal/mutation).
	Notifier mutation.Notifier
	// Notifications queue the messages of every executed mutation and
	// deliver the outbox; nil builds them from Config. Either way this
	// process runs an outbox worker until ctx ends.
	Notifications *app.Notifications
}

// Authenticator verifies a bearer token and says whom it speaks for.
type Authenticator = router.Authenticator

// Identity is who a verified token speaks for.
type Identity = tokencheck.Identity

// New builds the resource server handler.
func New(ctx context.Context, d Deps) (http.Handler, error) {
	if d.Store == nil {
		return nil, errors.New("rshttp: Store is required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	// Every line logged while serving a request carries its request id.
	d.Logger = slog.New(requestid.NewLogHandler(d.Logger.Handler()))
	if d.Clock == nil {
		d.Clock = store.SystemClock
	}
	cfg := d.Config
	if cfg.Resource == "" || cfg.Issuer == "" {
		return nil, errors.New("rshttp: Config.Resource and Config.Issuer are required")
	}
	if len(cfg.SecretKey) == 0 {
		// It encrypts the grant signing keys: without it no booking answer
		// could carry a grant and no mutation could run.
		return nil, errors.New("rshttp: Config.SecretKey is required (LINKSLOT_SECRET_KEY)")
	}

	notes, err := startNotifications(ctx, d.Store, cfg, d.Notifications, d.Clock, d.Metrics, d.Logger)
	if err != nil {
		return nil, err
	}
	d.Notifications = notes
	if d.Notifier == nil {
		d.Notifier = notes.Notifier
	}

	engine := booking.NewService(d.Store, d.Clock)
	engine.SetOfferMinutes(d.OfferMinutes)
	var domain tools.Domain = d.Domain
	if domain == nil {
		domain = engine
	}
	km := keys.NewManager(d.Store, cfg.SecretKey, store.KeyPurposeGrant, d.Clock)
	if err := km.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("rshttp: grant signing key: %w", err)
	}
	// Grants are signed inside the mutation's transaction: serve the
	// signing key from memory (see keys.SigningCache).
	ks := keys.NewSigningCache(km, time.Minute, d.Clock)
	if _, err := ks.SigningKey(ctx); err != nil {
		return nil, fmt.Errorf("rshttp: grant signing key: %w", err)
	}
	issuer := grant.New(ks, d.Clock)

	perAddr, perLink := DefaultPerAddress, DefaultPerLink
	if d.PerAddress != nil {
		perAddr = *d.PerAddress
	}
	if d.PerLink != nil {
		perLink = *d.PerLink
	}
	perCallback := DefaultCallbacks
	if d.Callbacks != nil {
		perCallback = *d.Callbacks
	}
	var addrLim, linkLim, callbackLim ratelimit.Allower
	switch {
	case d.NoRateLimits:
	case d.RateWindows != nil:
		rw := d.RateWindows
		addrLim = ratelimit.NewShared(rw, ratelimit.Limit(perAddr), ratelimit.SharedOptions{Prefix: "rs:addr:", Clock: d.Clock, Logger: d.Logger})
		linkLim = ratelimit.NewShared(rw, ratelimit.Limit(perLink), ratelimit.SharedOptions{Prefix: "rs:link:", Clock: d.Clock, Logger: d.Logger})
		callbackLim = ratelimit.NewShared(rw, ratelimit.Limit(perCallback), ratelimit.SharedOptions{Prefix: "rs:callback:", Clock: d.Clock, Logger: d.Logger})
	default:
		addrLim = ratelimit.New(ratelimit.Limit(perAddr), d.Clock)
		linkLim = ratelimit.New(ratelimit.Limit(perLink), d.Clock)
		callbackLim = ratelimit.New(ratelimit.Limit(perCallback), d.Clock)
	}
	// The mutation tools: the process's one mutation service over the
	// booking engine and grants, idempotency keys kept app.IdempotencyTTL.
	muts := app.NewMutations(d.Store, engine, issuer, d.Notifier, d.Clock)
	if callbackLim != nil {
		muts.CallbackLimit = callbackLim
	}
	if d.WaitlistEvery >= 0 {
		w := &app.WaitlistWorker{Store: d.Store, Engine: engine, Notifier: d.Notifier, Every: d.WaitlistEvery, Logger: d.Logger}
		go w.Run(ctx)
	}
	td := tools.Deps{Domain: domain, Grants: issuer, Logger: d.Logger, Metrics: d.Metrics, Uses: d.Store, Clock: d.Clock,
		Mutations: muts}
	if linkLim != nil {
		td.Links = linkLim
	}
	server := tools.NewServer(td, nil)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       d.Logger,
		// The router checks Origin (and Host for a loopback resource);
		// the SDK's check would refuse requests a reverse proxy forwards
		// to a loopback listener under the public Host.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        router.MaxBody,
	})

	ro := router.Options{
		Resource:       cfg.Resource,
		Issuer:         cfg.Issuer,
		AllowedOrigins: cfg.AllowedOrigins,
		MCP:            carryDeadline(mcpHandler),
		RequiredScope:  tools.RequiredScope,
		Auth:           d.Auth,
		Health:         app.HealthHandler(d.Store),
		Addresses:      addrLim,
		ClientAddr:     clientaddr.New(cfg.TrustedProxies, d.Logger),
		Logger:         d.Logger,
		Timeout:        cfg.RequestTimeout,
	}
	if ro.Timeout <= 0 {
		ro.Timeout = config.DefaultRequestTimeout
	}
	if ro.Auth == nil {
		checker, err := tokencheck.New(ctx, tokencheck.Options{
			Issuer:     cfg.Issuer,
			Resource:   cfg.Resource,
			HTTPClient: d.HTTPClient,
			Links:      d.Store,
			Clock:      d.Clock,
		})
		if err != nil {
			return nil, err
		}
		ro.Auth = checker
	}
	e, err := router.New(ro)
	if err != nil {
		return nil, err
	}
	if d.Metrics == nil {
		return app.StrictTransport(cfg.Production, e), nil
	}
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			metrics.SetRoute(c.Request().Context(), c.Request().Method+" "+c.Path())
			return next(c)
		}
	})
	return app.StrictTransport(cfg.Production, d.Metrics.HTTPMiddleware(nil, e)), nil
}

// startNotifications builds the process's notifications unless given and
// starts its outbox worker.
func startNotifications(ctx context.Context, s store.Store, cfg config.Config, n *app.Notifications, clock store.Clock,
	m *metrics.Metrics, log *slog.Logger) (*app.Notifications, error) {
	if n == nil {
		var err error
		n, err = app.NewNotifications(cfg, s, app.NotificationOptions{Clock: clock, Metrics: m.Registry(), Logger: log})
		if err != nil {
			return nil, fmt.Errorf("rshttp: notifications: %w", err)
		}
	}
	go n.Worker.Run(ctx)
	return n, nil
}

// carryDeadline hands the request's deadline (router.Options.Timeout) to the
// tool handlers as a context value: the SDK detaches their context from the
// request's cancellation (see tools.WithDeadline).
func carryDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dl, ok := r.Context().Deadline(); ok {
			r = r.WithContext(tools.WithDeadline(r.Context(), dl))
		}
		h.ServeHTTP(w, r)
	})
}
