package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
)

// UserDetail is one account as `users show` presents it: the account and
// its links (connected apps), active and revoked.
type UserDetail struct {
	Account AccountInfo `json:"account"`
	Links   []LinkInfo  `json:"links"`
}

// LinkInfo is one connected app of an account.
type LinkInfo struct {
	ID         string     `json:"id"`
	ClientID   string     `json:"client_id"`
	Scopes     []string   `json:"scopes"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt time.Time  `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// ListUsers returns up to limit accounts (1–200, default 50) whose email
// contains query (case-insensitively; empty lists all), ordered by email,
// and whether more exist after them.
func (s *Service) ListUsers(ctx context.Context, query string, limit, offset int) ([]AccountInfo, bool, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	if len(query) > 254 {
		return nil, false, invalid("query", "is longer than an email address can be (254 characters)")
	}
	rows, err := s.store.SearchAccounts(ctx, store.AccountQuery{Text: query, Limit: limit, Offset: max(offset, 0)})
	if err != nil {
		return nil, false, err
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]AccountInfo, len(rows))
	for i, a := range rows {
		out[i] = accountInfo(a)
	}
	return out, more, nil
}

func normEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// GetUser returns the account with email and its links.
func (s *Service) GetUser(ctx context.Context, email string) (UserDetail, error) {
	e := normEmail(email)
	acct, err := s.store.GetAccountByEmail(ctx, e)
	if err != nil {
		return UserDetail{}, translate(err, fmt.Sprintf("no account with email %q", e))
	}
	links, err := s.store.ListAccountLinks(ctx, acct.ID)
	if err != nil {
		return UserDetail{}, err
	}
	d := UserDetail{Account: accountInfo(acct), Links: []LinkInfo{}}
	for _, l := range links {
		d.Links = append(d.Links, LinkInfo{ID: l.ID, ClientID: l.ClientID, Scopes: nonNil(l.Scopes), Status: l.Status,
			CreatedAt: l.CreatedAt, LastUsedAt: l.LastUsedAt, RevokedAt: l.RevokedAt})
	}
	return d, nil
}

// SetUserDisabled disables or enables the account with email. Disabling
// also ends every browser session of the account and revokes every active
// link with its tokens, in the same transaction as the change and its
// audit event: sign-in is refused at once, and the resource server refuses
// the links' access tokens within five seconds (its cached link check).
// Enabling lets the person sign in again; revoked links stay revoked, so
// apps must be connected again. An administrator cannot disable their own
// account (ErrConflict), so that nobody locks themselves out by mistake.
func (s *Service) SetUserDisabled(ctx context.Context, a Actor, email string, disabled bool) (AccountInfo, error) {
	e := normEmail(email)
	action := "user.enable"
	if disabled {
		action = "user.disable"
	}
	var out store.Account
	err := s.inTx(ctx, func(tx Tx) error {
		acct, err := tx.GetAccountByEmail(ctx, e)
		if err != nil {
			return translate(err, fmt.Sprintf("no account with email %q", e))
		}
		if disabled && acct.ID == a.ID {
			return fmt.Errorf("%w: you cannot disable the account you are signed in with", ErrConflict)
		}
		var before store.Account
		out, err = tx.UpdateAccount(ctx, acct.ID, func(old store.Account) (store.Account, error) {
			before = old
			old.Disabled = disabled
			return old, nil
		})
		if err != nil {
			return translate(err, fmt.Sprintf("no account with email %q", e))
		}
		revoked := 0
		if disabled {
			if err := tx.DeleteAccountWebSessions(ctx, acct.ID, ""); err != nil {
				return err
			}
			links, err := tx.ListAccountLinks(ctx, acct.ID)
			if err != nil {
				return err
			}
			for _, l := range links {
				if l.Status != store.LinkActive {
					continue
				}
				if err := tx.RevokeLink(ctx, l.ID, s.now()); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				revoked++
			}
		}
		after := struct {
			AccountInfo
			LinksRevoked int `json:"links_revoked,omitempty"`
		}{accountInfo(out), revoked}
		return s.audit(ctx, tx, a, action, e, accountInfo(before), after)
	})
	if err != nil {
		return AccountInfo{}, err
	}
	return accountInfo(out), nil
}

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
