package dcr

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// Policy is LINKSLOT_DCR_POLICY.
type Policy string

// Policies.
const (
	PolicyOff  Policy = "off"
	PolicyOpen Policy = "open"
)

// ParsePolicy reads LINKSLOT_DCR_POLICY (empty is off).
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", PolicyOff:
		return PolicyOff, nil
	case PolicyOpen:
		return PolicyOpen, nil
	}
	return "", fmt.Errorf("must be off or open (got %q)", s)
}

// Defaults of LINKSLOT_DCR_SCOPES and LINKSLOT_DCR_RATE.
var DefaultPolicyScopes = []string{scope.OpenID, scope.OfflineAccess, scope.BookingsRead, scope.BookingsWrite}

// DefaultRate is LINKSLOT_DCR_RATE's default: registrations per client
// address per RateWindow.
const DefaultRate = 10

// RateWindow is the period of LINKSLOT_DCR_RATE.
const RateWindow = time.Hour

// ActorDynamic is the actor id of the audit events of registrations and
// of their deletions through RFC 7592; the event's client address says
// who.
const ActorDynamic = "dcr"

// Audit actions.
const (
	ActionRegister = "client.register_dynamic"
	ActionDelete   = "client.delete_dynamic"
)

// ErrUnauthorized: the registration access token is missing or wrong, or
// no such registration exists — indistinguishably (RFC 7592 §2.1).
var ErrUnauthorized = errors.New("dcr: invalid registration access token")

// RateLimited is a registration refused by LINKSLOT_DCR_RATE.
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string {
	return fmt.Sprintf("dcr: too many registrations from this address; retry after %s", e.RetryAfter)
}

// Store is what the service reads and writes: registrations (their
// client, registration and audit event in one transaction) and the shared
// rate windows.
type Store interface {
	InTx(ctx context.Context, fn func(store.Store) error) error
	GetClient(ctx context.Context, id string) (store.Client, error)
	GetClientRegistration(ctx context.Context, clientID string) (store.ClientRegistration, error)
	store.RateWindows
}

// Tx is what a registration and a deletion write, in the transaction that
// also records their audit event.
type Tx interface {
	CreateClient(ctx context.Context, c store.Client) error
	CreateClientRegistration(ctx context.Context, r store.ClientRegistration) error
	DeleteClient(ctx context.Context, id string) error
	AddAuditEvent(ctx context.Context, e store.AuditEvent) error
}

var _ Tx = store.Store(nil)

// inTx runs fn in one transaction (see Tx).
func (sv *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return sv.s.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// Options configure a Service.
type Options struct {
	// Scopes is LINKSLOT_DCR_SCOPES (nil: DefaultPolicyScopes).
	Scopes []string
	// Rate is LINKSLOT_DCR_RATE, registrations per client address per
	// hour (0: DefaultRate; negative: no limit).
	Rate int
	// ClientURI is the registration client URI of a client id (RFC 7592).
	ClientURI func(clientID string) string
	Clock     store.Clock
}

// Service registers, reads and deletes dynamic clients.
type Service struct {
	s Store
	o Options
}

// New returns a Service.
func New(s Store, o Options) *Service {
	if o.Scopes == nil {
		o.Scopes = slices.Clone(DefaultPolicyScopes)
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Clock == nil {
		o.Clock = store.SystemClock
	}
	if o.ClientURI == nil {
		o.ClientURI = func(id string) string { return id }
	}
	return &Service{s: s, o: o}
}

// Registered is a registration's answer (RFC 7591 §3.2.1, RFC 7592 §3):
// the metadata as accepted, the client id, and — only when it is created —
// the registration access token and the client secret.
type Registered struct {
	Metadata
	ClientID                string `json:"client_id"`
	ClientIDIssuedAt        int64  `json:"client_id_issued_at"`
	ClientSecret            string `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64 `json:"client_secret_expires_at,omitempty"`
	RegistrationAccessToken string `json:"registration_access_token,omitempty"`
	RegistrationClientURI   string `json:"registration_client_uri"`
}

// Register parses a registration request from the client address addr,
// counts it against the address's rate, and stores the client, its
// registration and an audit event together. A refused request (an *Error,
// or *RateLimited) stores no client.
func (sv *Service) Register(ctx context.Context, body []byte, addr string) (Registered, error) {
	m, err := Parse(body, sv.o.Scopes)
	if err != nil {
		return Registered{}, err
	}
	now := sv.o.Clock()
	if err := sv.take(ctx, addr, now); err != nil {
		return Registered{}, err
	}
	allowed := scope.Parse(m.Scope)
	c := store.Client{ID: clients.DynamicPrefix + store.RandomString(20), Name: m.ClientName, Public: m.Public(),
		RedirectURIs: slices.Clone(m.RedirectURIs), AllowedScopes: allowed, DefaultScopes: DefaultScopes(allowed),
		GrantTypes: slices.Clone(m.GrantTypes), IDTokenSignedResponseAlg: m.IDTokenSignedResponseAlg, CreatedAt: now, UpdatedAt: now}
	if len(m.Contacts) > 0 {
		c.Contact = m.Contacts[0]
	}
	out := Registered{Metadata: m, ClientID: c.ID, ClientIDIssuedAt: now.Unix(), RegistrationClientURI: sv.o.ClientURI(c.ID),
		RegistrationAccessToken: clients.GenerateSecret()}
	if !c.Public {
		out.ClientSecret = clients.GenerateSecret()
		if c.SecretHash, err = clients.HashSecret(out.ClientSecret); err != nil {
			return Registered{}, err
		}
		never := int64(0)
		out.ClientSecretExpiresAt = &never
	}
	if err := clients.Validate(c); err != nil {
		// Parse admits only what Validate accepts; say which rule slipped.
		return Registered{}, metadataError("%v", err)
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return Registered{}, err
	}
	reg := store.ClientRegistration{ClientID: c.ID, AccessTokenHash: store.HashSecret(out.RegistrationAccessToken),
		Metadata: meta, ClientAddr: addr, CreatedAt: now}
	err = sv.inTx(ctx, func(tx Tx) error {
		if err := tx.CreateClient(ctx, c); err != nil {
			return err
		}
		if err := tx.CreateClientRegistration(ctx, reg); err != nil {
			return err
		}
		return tx.AddAuditEvent(ctx, sv.audit(ctx, ActionRegister, c.ID, addr, nil, meta))
	})
	if err != nil {
		return Registered{}, fmt.Errorf("dcr: store the registration: %w", err)
	}
	return out, nil
}

// take counts one registration from addr, or answers *RateLimited.
func (sv *Service) take(ctx context.Context, addr string, now time.Time) error {
	if sv.o.Rate < 0 {
		return nil
	}
	key, sec, window := "dcr:addr:"+addr, now.Unix(), int64(RateWindow/time.Second)
	ok, err := sv.s.TakeRate(ctx, key, sec, window, sv.o.Rate)
	if err != nil {
		return fmt.Errorf("dcr: count the registration: %w", err)
	}
	if ok {
		return nil
	}
	// The window is full: it has room again when its oldest second leaves.
	retry := window
	if secs, err := sv.s.RateWindow(ctx, key, sec-window); err == nil && len(secs) > 0 {
		retry = max(1, secs[0].Sec+window-sec)
	}
	return &RateLimited{RetryAfter: time.Duration(retry) * time.Second}
}

// Read answers the registration of clientID (RFC 7592 §2.1): the metadata
// it was accepted with, the client's current name, redirect URIs, grant
// types and scope (an administrator may have changed them), and no
// secrets.
func (sv *Service) Read(ctx context.Context, clientID, token string) (Registered, error) {
	reg, err := sv.authorize(ctx, clientID, token)
	if err != nil {
		return Registered{}, err
	}
	var m Metadata
	if err := json.Unmarshal(reg.Metadata, &m); err != nil {
		return Registered{}, fmt.Errorf("dcr: read the stored metadata of %s: %w", clientID, err)
	}
	c, err := sv.s.GetClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return Registered{}, ErrUnauthorized
	} else if err != nil {
		return Registered{}, err
	}
	m.ClientName, m.RedirectURIs, m.GrantTypes, m.Scope = c.Name, c.RedirectURIs, c.GrantTypes, scope.Join(c.AllowedScopes)
	out := Registered{Metadata: m, ClientID: clientID, ClientIDIssuedAt: reg.CreatedAt.Unix(), RegistrationClientURI: sv.o.ClientURI(clientID)}
	if !m.Public() {
		never := int64(0)
		out.ClientSecretExpiresAt = &never
	}
	return out, nil
}

// Delete removes the client of clientID with everything it holds — its
// links and their tokens, its registration — and audits it (RFC 7592 §2.3).
func (sv *Service) Delete(ctx context.Context, clientID, token string, addr string) error {
	reg, err := sv.authorize(ctx, clientID, token)
	if err != nil {
		return err
	}
	return sv.inTx(ctx, func(tx Tx) error {
		if err := tx.DeleteClient(ctx, clientID); errors.Is(err, store.ErrNotFound) {
			return ErrUnauthorized
		} else if err != nil {
			return err
		}
		return tx.AddAuditEvent(ctx, sv.audit(ctx, ActionDelete, clientID, addr, reg.Metadata, nil))
	})
}

// authorize checks the registration access token of clientID in constant
// time; an unknown client is compared against a token nobody has, so both
// take the same time and answer the same.
func (sv *Service) authorize(ctx context.Context, clientID, token string) (store.ClientRegistration, error) {
	reg, err := sv.s.GetClientRegistration(ctx, clientID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.ClientRegistration{}, err
	}
	want := reg.AccessTokenHash
	if err != nil || want == "" {
		want = store.HashSecret("no registration has this token")
	}
	ok := subtle.ConstantTimeCompare([]byte(store.HashSecret(token)), []byte(want)) == 1
	if err != nil || token == "" || !ok {
		return store.ClientRegistration{}, ErrUnauthorized
	}
	return reg, nil
}

func (sv *Service) audit(ctx context.Context, action, target, addr string, before, after []byte) store.AuditEvent {
	return store.AuditEvent{ID: store.NewID("aud"), ActorID: ActorDynamic, Action: action, Target: target,
		Before: before, After: after, RequestID: requestid.From(ctx), ClientAddr: addr, CreatedAt: sv.o.Clock()}
}
