// Package demo loads the demonstration data of `make run` (docs/reference.md §8): the
// demo and admin accounts, the public client demo-mcp-client, and the demo
// businesses. Loading is idempotent: accounts and the client are created only
// when missing (their passwords and settings are left as an operator may have
// changed them), and so are businesses (matched by reference), so running it
// again duplicates and overwrites nothing.
package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
)

// The demo identities.
const (
	AccountEmail = "demo@example.com"
	AdminEmail   = "admin@example.com"
	// OwnerEmail owns MemberBusiness and StaffEmail works there as
	// MemberStaff (docs/reference.md §8, §16).
	OwnerEmail     = "owner@example.com"
	StaffEmail     = "staff@example.com"
	MemberBusiness = "biz-brightcut-barbers"
	MemberStaff    = "stf-dana-kowalski"
	ClientID       = "demo-mcp-client"
)

// redirectURIs are the demo client's redirects (docs/reference.md §8). All
// are loopback, so each matches on any port (RFC 8252 §7.3): /callback for
// scripts and the SDK clients, /oauth/callback for the MCP Inspector (its
// default is http://127.0.0.1:6276/oauth/callback) and mcp-remote
// (http://localhost:PORT/oauth/callback).
var redirectURIs = []string{"http://127.0.0.1/callback", "http://localhost/callback",
	"http://127.0.0.1/oauth/callback", "http://localhost/oauth/callback"}

// earlierRedirectURIs are the redirects the demo client was first created
// with; Load brings a client that still has exactly these up to date.
var earlierRedirectURIs = []string{"http://127.0.0.1/callback", "http://localhost/callback"}

// Client is the demo client's registration.
func Client(now time.Time) store.Client {
	return store.Client{
		ID:           ClientID,
		Name:         "Demo MCP client",
		Public:       true,
		RedirectURIs: slices.Clone(redirectURIs),
		AllowedScopes: []string{scope.OpenID, scope.Profile, scope.Email, scope.OfflineAccess,
			scope.BookingsRead, scope.BookingsWrite},
		DefaultScopes: []string{scope.BookingsRead, scope.BookingsWrite},
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		Contact:       "admin@example.com",
		CreatedAt:     now,
		UpdatedAt:     now,
	}
}

// Data is what Load writes.
type Data struct {
	Password string                       // of both accounts
	Hash     func(string) (string, error) // password hashing
	Catalogs []store.Catalog              // the demo businesses
	Clock    store.Clock                  // defaults to the system clock
}

// Result says what Load created.
type Result struct {
	AccountsCreated int
	ClientCreated   bool
	ClientUpdated   bool // an existing demo client was given the redirects it lacked
	Businesses      int
}

// Store is the part of store.Store Load reads and writes.
type Store interface {
	GetAccountByEmail(ctx context.Context, email string) (store.Account, error)
	CreateAccount(ctx context.Context, a store.Account) error
	UpdateAccount(ctx context.Context, id string, fn func(store.Account) (store.Account, error)) (store.Account, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	CreateClient(ctx context.Context, c store.Client) error
	UpdateClient(ctx context.Context, id string, fn func(store.Client) (store.Client, error)) (store.Client, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	PutCatalog(ctx context.Context, c store.Catalog) (store.Catalog, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	GetMember(ctx context.Context, businessID, accountID string) (store.Member, error)
	AddMember(ctx context.Context, m store.Member) error
}

var _ Store = store.Store(nil)

// Load writes the demo data, creating only what is missing.
func Load(ctx context.Context, s Store, d Data) (Result, error) {
	var res Result
	clock := d.Clock
	if clock == nil {
		clock = store.SystemClock
	}
	now := clock()
	for _, a := range []struct {
		email string
		admin bool
	}{{AccountEmail, false}, {AdminEmail, true}, {OwnerEmail, false}, {StaffEmail, false}} {
		old, err := s.GetAccountByEmail(ctx, a.email)
		if err == nil {
			// Demo accounts are verified, also when they were created
			// before addresses were verified.
			if old.EmailVerifiedAt == nil {
				if _, err := s.UpdateAccount(ctx, old.ID, func(x store.Account) (store.Account, error) {
					x.EmailVerifiedAt = &now
					return x, nil
				}); err != nil {
					return res, fmt.Errorf("verify %s: %w", a.email, err)
				}
			}
			continue
		}
		if !errors.Is(err, store.ErrNotFound) {
			return res, err
		}
		hash, err := d.Hash(d.Password)
		if err != nil {
			return res, fmt.Errorf("hash demo password: %w", err)
		}
		acc := store.Account{ID: store.NewID("acct"), Email: a.email, PasswordHash: hash, Admin: a.admin, CreatedAt: now, UpdatedAt: now,
			EmailVerifiedAt: &now}
		if err := s.CreateAccount(ctx, acc); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return res, fmt.Errorf("create %s: %w", a.email, err)
		}
		res.AccountsCreated++
	}
	if old, err := s.GetClient(ctx, ClientID); errors.Is(err, store.ErrNotFound) {
		if err := s.CreateClient(ctx, Client(now)); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return res, fmt.Errorf("create demo client: %w", err)
		}
		res.ClientCreated = true
	} else if err != nil {
		return res, err
	} else if slices.Equal(old.RedirectURIs, earlierRedirectURIs) {
		if res.ClientUpdated, err = addInspectorRedirects(ctx, s); err != nil {
			return res, err
		}
	}
	for _, c := range d.Catalogs {
		if _, err := s.GetBusiness(ctx, c.Business.Reference); err == nil {
			continue // already loaded; an administrator may have changed it since
		} else if !errors.Is(err, store.ErrNotFound) {
			return res, err
		}
		if _, err := s.PutCatalog(ctx, c); err != nil {
			return res, fmt.Errorf("demo business %s: %w", c.Business.Reference, err)
		}
		res.Businesses++
	}
	if err := addMembers(ctx, s, now); err != nil {
		return res, err
	}
	return res, nil
}

// addMembers makes OwnerEmail the owner and StaffEmail the staff member
// MemberStaff of MemberBusiness, when that business is loaded and they are
// not members yet.
func addMembers(ctx context.Context, s Store, now time.Time) error {
	b, err := s.GetBusiness(ctx, MemberBusiness)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	c, err := s.LoadCatalogByID(ctx, b.ID)
	if err != nil {
		return err
	}
	staffID := ""
	for _, st := range c.Staff {
		if st.Reference == MemberStaff {
			staffID = st.ID
		}
	}
	for _, m := range []struct{ email, role, staff string }{{OwnerEmail, store.RoleOwner, ""}, {StaffEmail, store.RoleStaff, staffID}} {
		if m.role == store.RoleStaff && m.staff == "" {
			continue // an administrator removed the staff record
		}
		acct, err := s.GetAccountByEmail(ctx, m.email)
		if err != nil {
			return fmt.Errorf("demo member %s: %w", m.email, err)
		}
		if _, err := s.GetMember(ctx, b.ID, acct.ID); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		err = s.AddMember(ctx, store.Member{BusinessID: b.ID, AccountID: acct.ID, Role: m.role, StaffID: m.staff, CreatedAt: now})
		if err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("demo member %s: %w", m.email, err)
		}
	}
	return nil
}

// addInspectorRedirects gives a demo client created before the /oauth/callback
// redirects existed those redirects, so the MCP Inspector links with it on a
// database an earlier `make run` made. A client whose redirects an operator
// changed is left as it is.
func addInspectorRedirects(ctx context.Context, s Store) (bool, error) {
	updated := false
	_, err := s.UpdateClient(ctx, ClientID, func(c store.Client) (store.Client, error) {
		if !slices.Equal(c.RedirectURIs, earlierRedirectURIs) {
			return c, nil
		}
		c.RedirectURIs, updated = slices.Clone(redirectURIs), true
		return c, nil
	})
	if err != nil {
		return false, fmt.Errorf("update demo client redirects: %w", err)
	}
	return updated, nil
}
