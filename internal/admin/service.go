package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/problem"
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
	ListAuditEvents(ctx context.Context, limit, offset int) ([]store.AuditEvent, error)
	SearchAccounts(ctx context.Context, q store.AccountQuery) ([]store.Account, error)
	GetAccountByEmail(ctx context.Context, email string) (store.Account, error)
	ListAccountLinks(ctx context.Context, accountID string) ([]store.Link, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	// Webhook endpoints and their deliveries (docs/reference.md §11).
	GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error)
	ListWebhookEndpoints(ctx context.Context, businessID string) ([]store.WebhookEndpoint, error)
	ListMessages(ctx context.Context, f store.OutboxFilter) ([]store.OutboxMessage, error)
	ListAttempts(ctx context.Context, messageIDs ...string) ([]store.DeliveryAttempt, error)
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
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("admin: a store is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = store.SystemClock
	}
	if cfg.Documents == nil {
		cfg.Documents = cimd.NewResolver(nil, cimd.Options{})
	}
	return &Service{store: cfg.Store, clock: cfg.Clock, docs: cfg.Documents, secret: cfg.SecretKey, sealer: cfg.Webhooks,
		development: cfg.Development, feeds: cfg.Feeds}, nil
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

// ---- clients ----

// ClientInfo is a client as administrators see it: everything but the
// secret hash.
type ClientInfo struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Public        bool     `json:"public"`
	HasSecret     bool     `json:"has_secret"`
	RedirectURIs  []string `json:"redirect_uris"`
	AllowedScopes []string `json:"allowed_scopes"`
	DefaultScopes []string `json:"default_scopes"`
	GrantTypes    []string `json:"grant_types"`
	LogoURL       string   `json:"logo_url,omitempty"`
	Contact       string   `json:"contact,omitempty"`
	Disabled      bool     `json:"disabled"`
	// URLClient: the id is the URL of the client's metadata document; its
	// name and redirect URIs are those of the document when registered.
	URLClient bool `json:"client_id_url,omitempty"`
	// Pinned: a copy of the document is used instead of fetching it.
	Pinned bool `json:"pinned_document,omitempty"`
	// OpenLinked: recorded when it first linked under the open policy,
	// not registered by an administrator.
	OpenLinked bool `json:"open_linked,omitempty"`
	// Dynamic: the client registered itself through dynamic client
	// registration (kind dcr, docs/reference.md §14).
	Dynamic bool   `json:"dynamic,omitempty"`
	JWKSURI string `json:"jwks_uri,omitempty"`
	// IDTokenSignedResponseAlg is ES256 or RS256 when the client chose the
	// algorithm of its ID tokens; absent, LINKSLOT_ID_TOKEN_ALG applies.
	IDTokenSignedResponseAlg string    `json:"id_token_signed_response_alg,omitempty"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// InfoOf returns the secret-free view of a client.
func InfoOf(c store.Client) ClientInfo {
	return ClientInfo{ID: c.ID, Name: c.Name, Public: c.Public, HasSecret: c.SecretHash != "",
		RedirectURIs: nonNil(c.RedirectURIs), AllowedScopes: nonNil(c.AllowedScopes), DefaultScopes: nonNil(c.DefaultScopes),
		GrantTypes: nonNil(c.GrantTypes), LogoURL: c.LogoURL, Contact: c.Contact, Disabled: c.Disabled,
		URLClient: clients.IsURLID(c.ID), Pinned: c.PinnedDocument != "", OpenLinked: c.OpenLinked, JWKSURI: c.JWKSURI,
		Dynamic: clients.IsDynamicID(c.ID), IDTokenSignedResponseAlg: c.IDTokenSignedResponseAlg, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// URLClientSpec registers a client by the URL of its client ID metadata
// document (docs/reference.md §10). Empty AllowedScopes means DefaultURLAllowed,
// empty DefaultScopes DefaultURLDefaults. Pin, when set, is a copy of the
// document to use instead of fetching it (for hosts that refuse fetches
// from data centres); it is checked by the same rules.
type URLClientSpec struct {
	URL           string
	AllowedScopes []string
	DefaultScopes []string
	Pin           []byte
}

// The scopes a URL client gets when its registration names none: those
// of the demo client (docs/reference.md §8).
var (
	DefaultURLAllowed  = []string{"openid", "profile", "email", "offline_access", "bookings:read", "bookings:write"}
	DefaultURLDefaults = []string{"bookings:read", "bookings:write"}
)

// RegisterURLClient registers a URL client: its document is fetched (or
// the pin read) and validated now, and its name kept for the lists. A
// client recorded under the open policy becomes registered. A URL an
// administrator already registered answers ErrAlreadyExists.
func (s *Service) RegisterURLClient(ctx context.Context, a Actor, spec URLClientSpec) (ClientInfo, error) {
	u := strings.TrimSpace(spec.URL)
	bad := invalid
	if !clients.IsURLID(u) {
		return ClientInfo{}, bad("client_id_url", "the client id URL must be an https URL, such as https://claude.ai/oauth/mcp-oauth-client-metadata")
	}
	var pinned string
	if len(spec.Pin) > 0 {
		var err error
		if pinned, err = cimd.Canonical(spec.Pin); err != nil {
			return ClientInfo{}, bad("pinned_document", "the pinned document is not JSON")
		}
	}
	doc, err := s.docs.Check(ctx, u, pinned)
	if err != nil {
		var ref *cimd.Refusal
		if errors.As(err, &ref) {
			path := "client_id_url"
			if pinned != "" {
				path = "pinned_document"
			}
			return ClientInfo{}, bad(path, ref.Message)
		}
		return ClientInfo{}, err
	}
	now := s.now()
	c := store.Client{ID: u, Name: doc.ClientName, Public: doc.AuthMethod() == cimd.AuthNone,
		RedirectURIs: slices.Clone(doc.RedirectURIs), AllowedScopes: clean(spec.AllowedScopes),
		DefaultScopes: clean(spec.DefaultScopes), GrantTypes: slices.Clone(DefaultGrantTypes),
		PinnedDocument: pinned, CreatedAt: now, UpdatedAt: now}
	if len(c.AllowedScopes) == 0 {
		c.AllowedScopes = slices.Clone(DefaultURLAllowed)
	}
	if len(c.DefaultScopes) == 0 && len(spec.AllowedScopes) == 0 {
		c.DefaultScopes = slices.Clone(DefaultURLDefaults)
	}
	if err := validateClient(c); err != nil {
		return ClientInfo{}, err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		old, err := tx.GetClient(ctx, u)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if err := tx.CreateClient(ctx, c); err != nil {
				return translate(err, fmt.Sprintf("a client with id %q is already registered", u))
			}
			return s.audit(ctx, tx, a, "client.register_url", u, nil, InfoOf(c))
		case err != nil:
			return err
		case !old.OpenLinked:
			return fmt.Errorf("%w: a client with id %q is already registered", ErrAlreadyExists, u)
		}
		if _, err := tx.UpdateClient(ctx, u, func(store.Client) (store.Client, error) { c.CreatedAt = old.CreatedAt; return c, nil }); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "client.register_url", u, InfoOf(old), InfoOf(c))
	})
	if err != nil {
		return ClientInfo{}, err
	}
	return InfoOf(c), nil
}

// ClientSpec is a new client's registration. Empty GrantTypes means
// authorization_code and refresh_token; empty IDTokenAlg the server's
// default ID token algorithm (LINKSLOT_ID_TOKEN_ALG).
type ClientSpec struct {
	ID            string
	Name          string
	Public        bool
	RedirectURIs  []string
	AllowedScopes []string
	DefaultScopes []string
	GrantTypes    []string
	LogoURL       string
	Contact       string
	IDTokenAlg    string // ES256 or RS256 (id_token_signed_response_alg)
}

// DefaultGrantTypes are what a client gets when its registration names none.
var DefaultGrantTypes = []string{clients.GrantAuthorizationCode, clients.GrantRefreshToken}

// ClientPatch changes some fields of a client; nil fields are kept. Whether
// a client is public cannot change: register a new client instead.
type ClientPatch struct {
	Name          *string
	RedirectURIs  *[]string
	AllowedScopes *[]string
	DefaultScopes *[]string
	GrantTypes    *[]string
	LogoURL       *string
	Contact       *string
	IDTokenAlg    *string // "" returns the client to the server's default
}

// CreatedClient is a new client and, for a confidential client, its secret:
// shown this once and never again.
type CreatedClient struct {
	Client ClientInfo
	Secret string
}

// clean trims, drops empty entries and duplicates, keeping order.
func clean(in []string) []string {
	out := []string{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// validateClient runs internal/clients.Validate and converts its problems.
// On top of those rules a client must be allowed at least one scope: one
// with none could never be granted anything.
func validateClient(c store.Client) error {
	var problems []Problem
	if err := clients.Validate(c); err != nil {
		ve, ok := problem.As(err)
		if !ok {
			return err
		}
		problems = append(problems, ve.Problems...)
	}
	if len(c.AllowedScopes) == 0 {
		problems = append(problems, Problem{Path: "allowed_scopes", Message: "at least one allowed scope is required (for example openid)"})
	}
	if len(problems) > 0 {
		return invalidInput(problems...)
	}
	return nil
}

// CreateClient registers a client. A confidential client gets a generated
// secret, returned once and stored hashed. A taken id answers
// ErrAlreadyExists.
func (s *Service) CreateClient(ctx context.Context, a Actor, spec ClientSpec) (CreatedClient, error) {
	now := s.now()
	c := store.Client{
		ID: strings.TrimSpace(spec.ID), Name: strings.TrimSpace(spec.Name), Public: spec.Public,
		RedirectURIs: clean(spec.RedirectURIs), AllowedScopes: clean(spec.AllowedScopes),
		DefaultScopes: clean(spec.DefaultScopes), GrantTypes: clean(spec.GrantTypes),
		LogoURL: strings.TrimSpace(spec.LogoURL), Contact: strings.TrimSpace(spec.Contact),
		IDTokenSignedResponseAlg: strings.TrimSpace(spec.IDTokenAlg), CreatedAt: now, UpdatedAt: now,
	}
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = slices.Clone(DefaultGrantTypes)
	}
	var secret string
	if !c.Public {
		secret = clients.GenerateSecret()
		h, err := clients.HashSecret(secret)
		if err != nil {
			return CreatedClient{}, fmt.Errorf("admin: hash client secret: %w", err)
		}
		c.SecretHash = h
	}
	if err := validateClient(c); err != nil {
		return CreatedClient{}, err
	}
	if clients.IsDynamicID(c.ID) {
		return CreatedClient{}, invalid("id", fmt.Sprintf(
			"client ids that begin with %q are given to clients that register themselves; choose another id", clients.DynamicPrefix))
	}
	err := s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetClient(ctx, c.ID); err == nil {
			return ErrAlreadyExists.WithMessage("a client with id %q is already registered", c.ID).WithField("id")
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.CreateClient(ctx, c); err != nil {
			return withField(translate(err, fmt.Sprintf("a client with id %q is already registered", c.ID)), "id")
		}
		return s.audit(ctx, tx, a, "client.create", c.ID, nil, InfoOf(c))
	})
	if err != nil {
		return CreatedClient{}, err
	}
	return CreatedClient{Client: InfoOf(c), Secret: secret}, nil
}

// ListClients returns every client ordered by id.
func (s *Service) ListClients(ctx context.Context) ([]ClientInfo, error) {
	cs, err := s.store.ListClients(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ClientInfo, len(cs))
	for i, c := range cs {
		out[i] = InfoOf(c)
	}
	return out, nil
}

// GetClient returns one client.
func (s *Service) GetClient(ctx context.Context, id string) (ClientInfo, error) {
	c, err := s.store.GetClient(ctx, id)
	if err != nil {
		return ClientInfo{}, translate(err, fmt.Sprintf("no client with id %q", id))
	}
	return InfoOf(c), nil
}

// updateClient applies fn to a client and audits the change, all in one
// transaction.
func (s *Service) updateClient(ctx context.Context, a Actor, id, action string, fn func(store.Client) (store.Client, error)) (ClientInfo, error) {
	var out store.Client
	err := s.inTx(ctx, func(tx Tx) error {
		var before store.Client
		c, err := tx.UpdateClient(ctx, id, func(old store.Client) (store.Client, error) {
			before = old
			return fn(old)
		})
		if err != nil {
			return translate(err, fmt.Sprintf("no client with id %q", id))
		}
		out = c
		return s.audit(ctx, tx, a, action, id, InfoOf(before), InfoOf(c))
	})
	if err != nil {
		return ClientInfo{}, err
	}
	return InfoOf(out), nil
}

// UpdateClient changes a client's registration; the result is validated as
// a whole.
func (s *Service) UpdateClient(ctx context.Context, a Actor, id string, p ClientPatch) (ClientInfo, error) {
	return s.updateClient(ctx, a, id, "client.update", func(c store.Client) (store.Client, error) {
		if p.Name != nil {
			c.Name = strings.TrimSpace(*p.Name)
		}
		if p.RedirectURIs != nil {
			c.RedirectURIs = clean(*p.RedirectURIs)
		}
		if p.AllowedScopes != nil {
			c.AllowedScopes = clean(*p.AllowedScopes)
		}
		if p.DefaultScopes != nil {
			c.DefaultScopes = clean(*p.DefaultScopes)
		}
		if p.GrantTypes != nil {
			c.GrantTypes = clean(*p.GrantTypes)
		}
		if p.LogoURL != nil {
			c.LogoURL = strings.TrimSpace(*p.LogoURL)
		}
		if p.Contact != nil {
			c.Contact = strings.TrimSpace(*p.Contact)
		}
		if p.IDTokenAlg != nil {
			c.IDTokenSignedResponseAlg = strings.TrimSpace(*p.IDTokenAlg)
		}
		return c, validateClient(c)
	})
}

// SetClientDisabled disables or enables a client. A disabled client's new
// authorizations and token requests are refused at once by the
// authorization server, and its access tokens by the resource server within
// five seconds.
func (s *Service) SetClientDisabled(ctx context.Context, a Actor, id string, disabled bool) (ClientInfo, error) {
	action := "client.enable"
	if disabled {
		action = "client.disable"
	}
	return s.updateClient(ctx, a, id, action, func(c store.Client) (store.Client, error) {
		c.Disabled = disabled
		return c, nil
	})
}

// RotateClientSecret gives a confidential client a new secret, returned
// this once and stored hashed; the old secret stops working at once. A
// public client answers ErrConflict.
func (s *Service) RotateClientSecret(ctx context.Context, a Actor, id string) (CreatedClient, error) {
	secret := clients.GenerateSecret()
	h, err := clients.HashSecret(secret)
	if err != nil {
		return CreatedClient{}, fmt.Errorf("admin: hash client secret: %w", err)
	}
	info, err := s.updateClient(ctx, a, id, "client.rotate_secret", func(c store.Client) (store.Client, error) {
		if c.Public {
			return c, ErrConflict.WithMessage("client %q is public and has no secret", id)
		}
		c.SecretHash = h
		return c, nil
	})
	if err != nil {
		return CreatedClient{}, err
	}
	return CreatedClient{Client: info, Secret: secret}, nil
}

// DeleteClient deletes a client with its links and tokens.
func (s *Service) DeleteClient(ctx context.Context, a Actor, id string) error {
	return s.inTx(ctx, func(tx Tx) error {
		c, err := tx.GetClient(ctx, id)
		if err != nil {
			return translate(err, fmt.Sprintf("no client with id %q", id))
		}
		if err := tx.DeleteClient(ctx, id); err != nil {
			return translate(err, fmt.Sprintf("no client with id %q", id))
		}
		return s.audit(ctx, tx, a, "client.delete", id, InfoOf(c), nil)
	})
}

// ---- users ----

// AccountInfo is an account as administrators see it (no password hash).
// An erased account's Email is its placeholder (store.ErasedEmail) and its
// Label "Deleted account".
type AccountInfo struct {
	ID              string     `json:"id"`
	Email           string     `json:"email"`
	Label           string     `json:"label"` // store.AccountLabel: the address, or "Deleted account"
	Admin           bool       `json:"admin"`
	Disabled        bool       `json:"disabled"`
	EmailVerifiedAt *time.Time `json:"email_verified_at,omitempty"`
	DeletedAt       *time.Time `json:"deleted_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
}

func accountInfo(a store.Account) AccountInfo {
	return AccountInfo{ID: a.ID, Email: a.Email, Label: store.AccountLabel(a), Admin: a.Admin, Disabled: a.Disabled, EmailVerifiedAt: a.EmailVerifiedAt,
		DeletedAt: a.DeletedAt, CreatedAt: a.CreatedAt}
}

// CreateUser creates an account with a password (hashed with
// internal/password), optionally an administrator.
func (s *Service) CreateUser(ctx context.Context, a Actor, email, pw string, admin bool) (AccountInfo, error) {
	var problems []Problem
	e, err := identity.NormalizeEmail(email)
	if err != nil {
		problems = append(problems, Problem{Path: "email", Message: messageOf(err)})
	}
	if err := identity.CheckPassword(email, pw); err != nil {
		problems = append(problems, Problem{Path: "password", Message: messageOf(err)})
	}
	if len(problems) > 0 {
		return AccountInfo{}, invalidInput(problems...)
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return AccountInfo{}, fmt.Errorf("admin: hash password: %w", err)
	}
	now := s.now()
	// An administrator vouches for the address: it counts as verified.
	acct := store.Account{ID: store.NewID("acct"), Email: e, PasswordHash: hash, Admin: admin, CreatedAt: now, UpdatedAt: now,
		EmailVerifiedAt: &now}
	err = s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetAccountByEmail(ctx, e); err == nil {
			return ErrAlreadyExists.WithMessage("an account with email %q exists", e).WithField("email")
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.CreateAccount(ctx, acct); err != nil {
			return withField(translate(err, fmt.Sprintf("an account with email %q exists", e)), "email")
		}
		return s.audit(ctx, tx, a, "user.create", e, nil, accountInfo(acct))
	})
	if err != nil {
		return AccountInfo{}, err
	}
	return accountInfo(acct), nil
}

// SetAdmin grants or removes the admin role of the account with email.
func (s *Service) SetAdmin(ctx context.Context, a Actor, email string, admin bool) (AccountInfo, error) {
	e := normEmail(email)
	var out store.Account
	err := s.inTx(ctx, func(tx Tx) error {
		acct, err := tx.GetAccountByEmail(ctx, e)
		if err != nil {
			return translate(err, fmt.Sprintf("no account with email %q", e))
		}
		var before store.Account
		out, err = tx.UpdateAccount(ctx, acct.ID, func(old store.Account) (store.Account, error) {
			before = old
			old.Admin = admin
			old.UpdatedAt = s.now()
			return old, nil
		})
		if err != nil {
			return translate(err, fmt.Sprintf("no account with email %q", e))
		}
		return s.audit(ctx, tx, a, "user.set_admin", e, accountInfo(before), accountInfo(out))
	})
	if err != nil {
		return AccountInfo{}, err
	}
	return accountInfo(out), nil
}

// ---- catalog ----

// ImportCatalog validates a catalog file as a whole and then writes every
// business in it in one transaction: a bad file changes nothing and answers
// ErrInvalid with every problem and its path. It returns the imported
// business references in file order.
func (s *Service) ImportCatalog(ctx context.Context, a Actor, data []byte, format string) ([]string, error) {
	res, err := s.ImportCatalogReport(ctx, a, data, format)
	return res.Imported, err
}

// ImportResult is what an import did: the business references written, in
// file order, and the warnings of catalogfile.Warnings (staff with no
// hours, services nobody performs), which did not stop it.
type ImportResult struct {
	Imported []string  `json:"imported"`
	Warnings []Problem `json:"warnings"`
}

// ImportCatalogReport is ImportCatalog with the file's warnings.
func (s *Service) ImportCatalogReport(ctx context.Context, a Actor, data []byte, format string) (ImportResult, error) {
	if catalogfile.NormalizeFormat(format) == "" {
		return ImportResult{}, invalid("format", fmt.Sprintf("unknown catalog format %q (want json or yaml)", format))
	}
	cats, err := catalogfile.Parse(data, format)
	if err != nil {
		if ve, ok := problem.As(err); ok {
			return ImportResult{}, invalidInput(ve.Problems...)
		}
		return ImportResult{}, err
	}
	warnings := catalogfile.Warnings(cats)
	if warnings == nil {
		warnings = []Problem{}
	}
	refs := make([]string, len(cats))
	err = s.inTx(ctx, func(tx Tx) error {
		for i, c := range cats {
			ref := c.Business.Reference
			refs[i] = ref
			var before any
			if old, err := tx.LoadCatalog(ctx, ref); err == nil {
				if before, err = catalogJSON(old); err != nil {
					return err
				}
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			saved, err := tx.PutCatalog(ctx, c)
			if err != nil {
				var inUse *store.InUseError
				if errors.As(err, &inUse) {
					return invalid(fmt.Sprintf("businesses[%d]", i),
						fmt.Sprintf("%s %q still has bookings; keep it in the file, or cancel its bookings first", inUse.Kind, inUse.Reference))
				}
				return fmt.Errorf("admin: import business %q: %w", ref, err)
			}
			after, err := catalogJSON(saved)
			if err != nil {
				return err
			}
			if err := s.audit(ctx, tx, a, "catalog.import", ref, before, after); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return ImportResult{Imported: refs, Warnings: warnings}, nil
}

// withField names the field of a domain error.
func withField(err error, field string) error {
	if e, ok := problem.As(err); ok {
		return e.WithField(field)
	}
	return err
}

// catalogJSON is one business in the file's JSON form, for the audit log.
func catalogJSON(c store.Catalog) (json.RawMessage, error) {
	b, err := catalogfile.Export([]store.Catalog{c}, catalogfile.FormatJSON)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Businesses []json.RawMessage `json:"businesses"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Businesses) != 1 {
		return nil, fmt.Errorf("admin: catalog audit document: %v", err)
	}
	return doc.Businesses[0], nil
}

// ExportCatalog writes every business as a catalog file in format. The
// export is audited (it copies the whole catalog out).
func (s *Service) ExportCatalog(ctx context.Context, a Actor, format string) ([]byte, error) {
	if catalogfile.NormalizeFormat(format) == "" {
		return nil, invalid("format", fmt.Sprintf("unknown catalog format %q (want json or yaml)", format))
	}
	bs, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	cats := make([]store.Catalog, 0, len(bs))
	for _, b := range bs {
		c, err := s.store.LoadCatalogByID(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		cats = append(cats, c)
	}
	out, err := catalogfile.Export(cats, format)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		return s.audit(ctx, tx, a, "catalog.export", catalogfile.NormalizeFormat(format), nil, map[string]int{"businesses": len(cats)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BusinessInfo is a business as the admin list shows it.
type BusinessInfo struct {
	Reference    string `json:"reference"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	City         string `json:"city,omitempty"`
	TimeZone     string `json:"timezone"`
	AgentBooking bool   `json:"agent_booking"`
	ContactEmail string `json:"contact_email,omitempty"`
}

func businessInfo(b store.Business) BusinessInfo {
	return BusinessInfo{Reference: b.Reference, Name: b.Name, Category: b.Category, City: b.City, TimeZone: b.TimeZone,
		AgentBooking: b.AgentBooking, ContactEmail: b.ContactEmail}
}

// ListBusinesses returns every business ordered by reference.
func (s *Service) ListBusinesses(ctx context.Context) ([]BusinessInfo, error) {
	bs, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BusinessInfo, len(bs))
	for i, b := range bs {
		out[i] = businessInfo(b)
	}
	return out, nil
}

// SetAgentBooking switches whether agents may find and book a business.
func (s *Service) SetAgentBooking(ctx context.Context, a Actor, reference string, on bool) (BusinessInfo, error) {
	var out store.Business
	err := s.inTx(ctx, func(tx Tx) error {
		before, err := tx.GetBusiness(ctx, reference)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", reference))
		}
		out, err = tx.SetAgentBooking(ctx, reference, on)
		if err != nil {
			return translate(err, fmt.Sprintf("no business with reference %q", reference))
		}
		return s.audit(ctx, tx, a, "business.agent_booking", reference,
			map[string]bool{"agent_booking": before.AgentBooking}, map[string]bool{"agent_booking": out.AgentBooking})
	})
	if err != nil {
		return BusinessInfo{}, err
	}
	return businessInfo(out), nil
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
