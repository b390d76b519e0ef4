package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/webhook"
)

// ActorCLI is the actor id recorded for the command line.
const ActorCLI = "cli"

// Actor is who performs an operation: an account id, ActorCLI, or the
// admin token's actor, and the request it came with (recorded in the audit
// log; when empty, the request id in the context is used).
type Actor struct {
	ID        string
	RequestID string
}

// Store is the part of store.Store the Service uses: the reads of its
// listings, and InTx for every change.
type Store interface {
	ListClients(ctx context.Context) ([]store.Client, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	ListBusinesses(ctx context.Context) ([]store.Business, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error)
	ListAuditEvents(ctx context.Context, limit, offset int) ([]store.AuditEvent, error)
	SearchAccounts(ctx context.Context, q store.AccountQuery) ([]store.Account, error)
	GetAccountByEmail(ctx context.Context, email string) (store.Account, error)
	ListAccountLinks(ctx context.Context, accountID string) ([]store.Link, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	ListBusinessMembers(ctx context.Context, businessID string) ([]store.Member, error)
	// Webhook endpoints and their deliveries (docs/reference.md §11).
	GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error)
	ListWebhookEndpoints(ctx context.Context, businessID string) ([]store.WebhookEndpoint, error)
	ListMessages(ctx context.Context, f store.OutboxFilter) ([]store.OutboxMessage, error)
	ListAttempts(ctx context.Context, messageIDs ...string) ([]store.DeliveryAttempt, error)
	// Connected calendars and reminders (docs/calendars.md).
	GetStaffCalendar(ctx context.Context, staffID string) (store.StaffCalendar, error)
	ReminderOffsets(ctx context.Context, businessID string) ([]time.Duration, error)
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// Tx is what a change reads and writes through, in the transaction that
// also records its audit event: nothing else can be written with it.
type Tx interface {
	GetAccountByEmail(ctx context.Context, email string) (store.Account, error)
	CreateAccount(ctx context.Context, a store.Account) error
	UpdateAccount(ctx context.Context, id string, fn func(store.Account) (store.Account, error)) (store.Account, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	CreateClient(ctx context.Context, c store.Client) error
	UpdateClient(ctx context.Context, id string, fn func(store.Client) (store.Client, error)) (store.Client, error)
	DeleteClient(ctx context.Context, id string) error
	LoadCatalog(ctx context.Context, businessReference string) (store.Catalog, error)
	PutCatalog(ctx context.Context, c store.Catalog) (store.Catalog, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	SetAgentBooking(ctx context.Context, reference string, on bool) (store.Business, error)
	GetMember(ctx context.Context, businessID, accountID string) (store.Member, error)
	AddMember(ctx context.Context, m store.Member) error
	RemoveMember(ctx context.Context, businessID, accountID string) error
	ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error)
	ReplaceCredentials(ctx context.Context, businessID string, cs []store.Credential) error
	AddAuditEvent(ctx context.Context, e store.AuditEvent) error
	DeleteAccountWebSessions(ctx context.Context, accountID, keepIDHash string) error
	ListAccountLinks(ctx context.Context, accountID string) ([]store.Link, error)
	RevokeLink(ctx context.Context, id string, now time.Time) error
	store.Keys // keys.Manager, for RotateSigningKey
	CreateWebhookEndpoint(ctx context.Context, e store.WebhookEndpoint) error
	UpdateWebhookEndpoint(ctx context.Context, id string, fn func(store.WebhookEndpoint) (store.WebhookEndpoint, error)) (store.WebhookEndpoint, error)
	DeleteWebhookEndpoint(ctx context.Context, id string) error
	GetMessage(ctx context.Context, id string) (store.OutboxMessage, error)
	ReplayMessage(ctx context.Context, id string, now time.Time) (store.OutboxMessage, error)
	PutStaffCalendar(ctx context.Context, c store.StaffCalendar) error
	GetStaffCalendar(ctx context.Context, staffID string) (store.StaffCalendar, error)
	ListCalendarBusy(ctx context.Context, staffID string, from, to time.Time) ([]store.CalendarBusy, error)
	DeleteStaffCalendar(ctx context.Context, staffID string) error
	SetReminderOffsets(ctx context.Context, businessID string, offsets []time.Duration, now time.Time) error
}

var (
	_ Store = store.Store(nil)
	_ Tx    = store.Store(nil)
)

// Config configures a Service.
type Config struct {
	Store Store
	// Clock stamps audit events and records; nil means store.SystemClock.
	Clock store.Clock
	// Documents fetches client ID metadata documents when a URL client is
	// registered; nil means production rules (cimd.NewResolver with no
	// store: only its Check is used).
	Documents *cimd.Resolver
	// SecretKey encrypts signing keys at rest (LINKSLOT_SECRET_KEY); only
	// RotateSigningKey needs it.
	SecretKey []byte
	// Webhooks seals webhook endpoint secrets (from LINKSLOT_SECRET_KEY);
	// nil refuses the webhook operations that create or rotate a secret.
	Webhooks *webhook.Sealer
	// Development admits http:// webhook URLs on loopback (LINKSLOT_ENV).
	Development bool
	// Feeds makes the calendar feeds of businesses and staff (nil: refused).
	Feeds *feed.Feeds
	// Calendars connects and syncs staff calendars (nil: refused).
	Calendars *calendar.Service
	// Freed, when set, is told of every span a disconnected calendar's
	// busy times blocked from now on, after the disconnect committed: the
	// waitlist is offered it as after a sync that frees time
	// (calendar.Service.Freed, mutation.Service.SpanFreed through
	// app.SpanFreed; docs/calendars.md "Freed time"). A failure is logged
	// (Logger, default Calendars.Logger); the disconnect stands.
	Freed  func(ctx context.Context, businessID, staffID string, start, end time.Time) error
	Logger *slog.Logger
}

// Service performs administrative operations, each audited in the same
// transaction as its change.
type Service struct {
	store       Store
	clock       store.Clock
	docs        *cimd.Resolver
	secret      []byte
	sealer      *webhook.Sealer
	development bool
	feeds       *feed.Feeds
	calendars   *calendar.Service
	freed       func(ctx context.Context, businessID, staffID string, start, end time.Time) error
	log         *slog.Logger
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("admin: a store is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = store.SystemClock
	}
	logger := cfg.Logger
	if logger == nil && cfg.Calendars != nil {
		logger = cfg.Calendars.Logger
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Documents == nil {
		cfg.Documents = cimd.NewResolver(nil, cimd.Options{})
	}
	return &Service{store: cfg.Store, clock: cfg.Clock, docs: cfg.Documents, secret: cfg.SecretKey, sealer: cfg.Webhooks,
		development: cfg.Development, feeds: cfg.Feeds, calendars: cfg.Calendars, freed: cfg.Freed, log: logger}, nil
}

func (s *Service) now() time.Time { return store.UTC(s.clock()) }

// inTx runs fn in one transaction (see Tx).
func (s *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// audit writes one event with tx. before and after are marshalled to JSON
// (nil writes nothing); callers pass views without secrets.
func (s *Service) audit(ctx context.Context, tx Tx, a Actor, action, target string, before, after any) error {
	e := store.AuditEvent{ID: store.NewID("aud"), ActorID: a.ID, Action: action, Target: target, RequestID: a.RequestID, CreatedAt: s.now()}
	if e.ActorID == "" {
		return errors.New("admin: audit event without an actor")
	}
	if e.RequestID == "" {
		e.RequestID = requestid.From(ctx)
	}
	e.ClientAddr = clientaddr.From(ctx)
	var err error
	if e.Before, err = marshalAudit(before); err != nil {
		return err
	}
	if e.After, err = marshalAudit(after); err != nil {
		return err
	}
	if err := tx.AddAuditEvent(ctx, e); err != nil {
		return fmt.Errorf("admin: write audit event: %w", err)
	}
	return nil
}

func marshalAudit(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// translate maps store errors to this package's, with message what.
func translate(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return ErrNotFound.WithMessage("%s", what).Wrap(err)
	case errors.Is(err, store.ErrAlreadyExists):
		return ErrAlreadyExists.WithMessage("%s", what).Wrap(err)
	}
	return err
}

// ---- audit ----

// AuditEntry is one audit event as administrators see it.
type AuditEntry struct {
	ID        string          `json:"id"`
	ActorID   string          `json:"actor"`
	Action    string          `json:"action"`
	Target    string          `json:"target"`
	Before    json.RawMessage `json:"before,omitempty"`
	After     json.RawMessage `json:"after,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	// ClientAddr is where the change came from (empty for the CLI).
	ClientAddr string    `json:"client_addr,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// ListAudit returns up to limit events (1–200, default 50), newest first,
// and whether more exist after them.
func (s *Service) ListAudit(ctx context.Context, limit, offset int) ([]AuditEntry, bool, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	offset = max(offset, 0)
	evs, err := s.store.ListAuditEvents(ctx, limit, offset)
	if err != nil {
		return nil, false, err
	}
	more := len(evs) > limit
	if more {
		evs = evs[:limit]
	}
	out := make([]AuditEntry, len(evs))
	for i, e := range evs {
		out[i] = AuditEntry{ID: e.ID, ActorID: e.ActorID, Action: e.Action, Target: e.Target,
			Before: rawOrNil(e.Before), After: rawOrNil(e.After), RequestID: e.RequestID, ClientAddr: e.ClientAddr, CreatedAt: e.CreatedAt}
	}
	return out, more, nil
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}
