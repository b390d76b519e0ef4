package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/callbacks"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/store"
)

// IdempotencyTTL is how long every mutation's idempotency keys are kept,
// the agents' (the resource server) and the web's (a cancellation on My
// bookings) alike: docs/reference.md §5 asks for at least 24 hours. The
// janitor of every server process deletes expired ones (internal/janitor).
const IdempotencyTTL = 48 * time.Hour

// NewMutations is the one way a process assembles its mutation service:
// over its one booking engine, with keys kept IdempotencyTTL and the
// process's one clock. grants is nil where no grant is presented (the web
// cancels as the signed-in person); notifier nil sends nothing.
func NewMutations(s store.Store, engine *booking.Service, grants mutation.Grants, notifier mutation.Notifier, clock store.Clock) *mutation.Service {
	return &mutation.Service{Engine: engine, Grants: grants, Keeper: idempotency.New(s, mutation.InTx(s), clock, IdempotencyTTL),
		Notifier: notifier, Clock: clock, InTx: mutation.InTx(s), Accounts: s}
}

// SpanFreed is business.Config.Freed and calendar.Service.Freed through
// m: a removed time off, or a connected calendar's event deleted or moved,
// is offered to the waitlist (mutation.Service.SpanFreed).
func SpanFreed(m *mutation.Service) func(ctx context.Context, businessID, staffID string, start, end time.Time) error {
	return func(ctx context.Context, businessID, staffID string, start, end time.Time) error {
		_, err := m.SpanFreed(ctx, businessID, staffID, start, end)
		return err
	}
}

// AuthServices are the authorization server's domain services, each built
// once per process by NewAuthServices and handed to the pages (consent-ui)
// and the OAuth handler (authhttp) explicitly.
type AuthServices struct {
	// Notifications queue every account e-mail and booking message; the
	// server's wiring runs its Worker (Start).
	Notifications *Notifications
	Identity      *identity.Service
	Passkeys      *passkey.Service
	// Bookings is the process's one booking engine, so its one catalog
	// cache: My bookings reads it and Mutations cancels through it.
	Bookings  *booking.Service
	Mutations *mutation.Service
	// Feeds serves the calendar feeds.
	Feeds *feed.Feeds
	// Business is the business console's domain: members, invitations
	// (mailed through the outbox), time off and catalog edits.
	Business *business.Service
	// Callbacks is the businesses' inbox of callback requests (the
	// console's Callbacks page).
	Callbacks *callbacks.Inbox
}

// ServiceOptions tune NewAuthServices; the zero value is production.
type ServiceOptions struct {
	Clock store.Clock // default store.SystemClock
	// RateWindows keeps the sign-in throttle in the database, shared by
	// the replicas (SharedRateWindows); nil counts in this process.
	RateWindows store.RateWindows
	// Metrics registers the outbox metrics (nil: none).
	Metrics *prometheus.Registry
	Logger  *slog.Logger
	// Notifications replaces the ones built from the configuration (a
	// test's mail sender).
	Notifications *Notifications
	// Hasher replaces internal/password for the identity service (tests'
	// cheap hasher).
	Hasher identity.Hasher
}

// NewAuthServices builds the authorization server's services on s: one
// outbox, one identity service mailing through it, one passkey service,
// one booking engine, one mutation service and one feed service.
func NewAuthServices(cfg config.Config, s store.Store, o ServiceOptions) (*AuthServices, error) {
	if s == nil {
		return nil, errors.New("app: services need a store")
	}
	clock := o.Clock
	if clock == nil {
		clock = store.SystemClock
	}
	notes := o.Notifications
	if notes == nil {
		var err error
		if notes, err = NewNotifications(cfg, s, NotificationOptions{Clock: clock, Metrics: o.Metrics, Logger: o.Logger}); err != nil {
			return nil, fmt.Errorf("notifications: %w", err)
		}
	}
	mailer := AccountMailer(notes.Notifier)
	id, err := identity.New(identity.Config{Store: s, Clock: clock, Hasher: o.Hasher, RateWindows: o.RateWindows, Issuer: cfg.Issuer, Mailer: mailer})
	if err != nil {
		return nil, err
	}
	pk, err := passkey.New(passkey.Config{Store: s, Identity: id, Issuer: cfg.Issuer, Clock: clock, Mailer: mailer})
	if err != nil {
		return nil, err
	}
	engine := booking.NewService(s, clock)
	feeds, err := feed.New(s, cfg.SecretKey, cfg.Issuer, clock)
	if err != nil {
		return nil, err
	}
	muts := NewMutations(s, engine, nil, notes.Notifier, clock)
	if notes.Calendars != nil {
		// The sync loop and the console's "Sync now" (both this
		// process's Calendars) offer the time a deleted event frees.
		notes.Calendars.Freed = SpanFreed(muts)
	}
	biz, err := business.New(business.Config{Store: s, Clock: clock, Mailer: mailer, Issuer: cfg.Issuer,
		Freed: SpanFreed(muts), Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return &AuthServices{Notifications: notes, Identity: id, Passkeys: pk, Bookings: engine,
		Mutations: muts, Feeds: feeds, Business: biz,
		Callbacks: &callbacks.Inbox{Store: s, Notifier: notes.Notifier, Clock: clock}}, nil
}

// AdminService is the admin service of a server process: app.AdminService
// with this process's calendar feeds and webhook sealer rather than
// second ones.
func (svc *AuthServices) AdminService(cfg config.Config, s store.Store, docs *cimd.Resolver) (*admin.Service, error) {
	return admin.New(admin.Config{Store: s, Development: !cfg.Production, Documents: docs, SecretKey: cfg.SecretKey,
		Webhooks: svc.Notifications.Sealer, Feeds: svc.Feeds, Calendars: svc.Notifications.Calendars,
		Freed: SpanFreed(svc.Mutations)})
}
