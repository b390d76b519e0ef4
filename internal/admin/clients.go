package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Clients: registration by the administrators, by URL, and their changes.

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
		ID: strings.TrimSpace(spec.ID), Name: clients.NormalizeName(spec.Name), Public: spec.Public,
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
			c.Name = clients.NormalizeName(*p.Name)
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
