package store

import (
	"context"
	"time"
)

// Member roles (docs/reference.md §16).
const (
	RoleOwner = "owner"
	RoleStaff = "staff"
)

// Member is an account's place at a business: its owner, or one of its
// staff tied to the staff record whose calendar it sees.
type Member struct {
	BusinessID string
	AccountID  string
	Role       string // RoleOwner or RoleStaff
	StaffID    string // RoleStaff only
	CreatedAt  time.Time
	// Email is the account's address, filled in by the listings.
	Email string
}

// MemberInvitation is an owner's e-mailed invitation of a staff member.
// Only the hash of its token is stored.
type MemberInvitation struct {
	TokenHash  string
	BusinessID string
	StaffID    string
	Email      string // where it was sent
	InvitedBy  string // the owner's account id
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     *time.Time
}

// Members stores the members of businesses and the invitations of staff.
// The memberships of a deleted account (AccountErasure) are never read:
// GetMember answers ErrNotFound and the listings leave them out.
type Members interface {
	// AddMember inserts a membership; a second one of the same account at
	// the same business answers ErrAlreadyExists.
	AddMember(ctx context.Context, m Member) error
	GetMember(ctx context.Context, businessID, accountID string) (Member, error)
	// ListBusinessMembers returns a business's members with their e-mail
	// addresses, owners first, then by address.
	ListBusinessMembers(ctx context.Context, businessID string) ([]Member, error)
	// ListAccountMembers returns the memberships of an account.
	ListAccountMembers(ctx context.Context, accountID string) ([]Member, error)
	// RemoveMember deletes a membership (ErrNotFound when there is none).
	RemoveMember(ctx context.Context, businessID, accountID string) error
	CreateMemberInvitation(ctx context.Context, inv MemberInvitation) error
	GetMemberInvitation(ctx context.Context, tokenHash string) (MemberInvitation, error)
	// UseMemberInvitation marks an unused invitation used at now; one
	// used already answers ErrConflict, so of two acceptances one wins.
	UseMemberInvitation(ctx context.Context, tokenHash string, now time.Time) error
}

// Console is what a business's console changes beyond the catalog import:
// its staff's time off. Time off written here moves the business row's
// UpdatedAt, the version the booking engine's catalog cache checks, in the
// same transaction.
type Console interface {
	// AddTimeOff inserts a time off of a staff member of businessID
	// (ErrNotFound when the staff member is not the business's).
	AddTimeOff(ctx context.Context, businessID string, t TimeOff) (TimeOff, error)
	// DeleteTimeOff removes a time off of a staff member of businessID
	// (ErrNotFound when there is no such time off at that business).
	DeleteTimeOff(ctx context.Context, businessID, id string) error
}
