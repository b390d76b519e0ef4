// Package business is the business at the other end of every booking
// (docs/reference.md §16): its members (owners and staff), the e-mailed
// invitations of staff, and what the business console reads and changes —
// its bookings, its staff's time off, its opening hours, services and
// policies. Every change is written with its audit event in one
// transaction, and every change of the catalog moves the business row's
// UpdatedAt, which the booking engine's catalog cache compares on every
// replica, so the next availability answer anywhere sees it.
//
// Who may do what is decided here, never by the pages: a member reaches
// only its own business; staff reach their own calendar (their staff
// record's bookings and time off); owners reach everything of their
// business. Anything outside that answers ErrNotFound, as if it did not
// exist, so nobody learns what another business holds.
package business

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/store"
)

// InvitationLifetime is how long an invitation of a staff member works.
const InvitationLifetime = 7 * 24 * time.Hour

// TopicInvitation is the topic of an invitation e-mail.
const TopicInvitation = "business.invitation"

// Errors (internal/problem). Messages are sentences the pages show as they
// are.
var (
	// ErrNotFound: no such business, booking, staff member or time off —
	// or one the member may not reach.
	ErrNotFound = problem.New(problem.CodeNotFound, "There is no such page in your business console.")
	// ErrInvalid: refused input; Problems lists each field.
	ErrInvalid = problem.New(problem.CodeInvalidInput, "Nothing was changed: please correct the fields below.")
	// ErrOrphans: the edit would leave booked appointments outside the
	// business's hours; Problems lists them. Nothing was changed; the
	// same edit with confirmation goes through.
	ErrOrphans = problem.New(problem.CodeConfirmationRequired, "Nothing was changed yet: some booked appointments would fall outside the new hours.")
	// ErrInvitation: the invitation link is unknown, used or expired.
	ErrInvitation = problem.New(problem.CodeEmailLinkInvalid, "This invitation is not valid: it may have been used already, expired, or been mistyped.")
	// ErrAlreadyMember: the account is a member of the business already.
	ErrAlreadyMember = problem.New(problem.CodeAlreadyExists, "This account is a member of the business already.")
)

// Store is what the Service reads outside transactions, and InTx.
type Store interface {
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	ListAccountMembers(ctx context.Context, accountID string) ([]store.Member, error)
	ListBusinessMembers(ctx context.Context, businessID string) ([]store.Member, error)
	ListBusinessBookings(ctx context.Context, f store.BusinessBookingFilter) ([]store.Booking, error)
	GetBookingByReference(ctx context.Context, reference string) (store.Booking, error)
	ListBookingEvents(ctx context.Context, bookingID string) ([]store.BookingEvent, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetLink(ctx context.Context, id string) (store.Link, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	ListBusinesses(ctx context.Context) ([]store.Business, error)
	ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error)
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// Tx is what a change reads and writes in the transaction that also writes
// its audit event (docs/design.md "Transactions").
type Tx interface {
	identity.MailTx
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetMember(ctx context.Context, businessID, accountID string) (store.Member, error)
	AddMember(ctx context.Context, m store.Member) error
	RemoveMember(ctx context.Context, businessID, accountID string) error
	CreateMemberInvitation(ctx context.Context, inv store.MemberInvitation) error
	GetMemberInvitation(ctx context.Context, tokenHash string) (store.MemberInvitation, error)
	UseMemberInvitation(ctx context.Context, tokenHash string, now time.Time) error
	AddTimeOff(ctx context.Context, businessID string, t store.TimeOff) (store.TimeOff, error)
	DeleteTimeOff(ctx context.Context, businessID, id string) error
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	PutCatalog(ctx context.Context, c store.Catalog) (store.Catalog, error)
	ListBusinessBookings(ctx context.Context, f store.BusinessBookingFilter) ([]store.Booking, error)
	ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error)
	ReplaceCredentials(ctx context.Context, businessID string, cs []store.Credential) error
	AddAuditEvent(ctx context.Context, e store.AuditEvent) error
}

var (
	_ Store = store.Store(nil)
	_ Tx    = store.Store(nil)
)

// Config configures a Service.
type Config struct {
	Store Store
	Clock store.Clock // nil: store.SystemClock
	// Mailer sends invitations (nil: InviteStaff answers
	// identity.ErrMailUnavailable).
	Mailer identity.Mailer
	// Issuer is the authorization server's address, the base of the
	// invitation link.
	Issuer string
	// Freed is told of the time a change freed — a staff member's removed
	// time off, [start, end) — once the change has committed, so that the
	// waitlist is offered it (mutation.Service.SpanFreed, wired by
	// internal/app; docs/design.md "The waitlist"). nil: nobody is told.
	Freed func(ctx context.Context, businessID, staffID string, start, end time.Time) error
	// Logger records a Freed that failed (nil: discarded): the change
	// itself stands.
	Logger *slog.Logger
}

// Service is the business console's domain.
type Service struct {
	store  Store
	clock  store.Clock
	mailer identity.Mailer
	issuer string
	freed  func(ctx context.Context, businessID, staffID string, start, end time.Time) error
	log    *slog.Logger
}

// New returns a Service.
func New(c Config) (*Service, error) {
	if c.Store == nil {
		return nil, errors.New("business: a store is required")
	}
	if c.Clock == nil {
		c.Clock = store.SystemClock
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: c.Store, clock: c.Clock, mailer: c.Mailer, issuer: c.Issuer, freed: c.Freed, log: c.Logger}, nil
}

func (s *Service) now() time.Time { return store.UTC(s.clock()) }

func (s *Service) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return s.store.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// Membership is a member with its business, as the console acts for it.
type Membership struct {
	store.Member
	Business store.Business
	// StaffName is a staff member's name on their staff record (the name
	// the person sees when they act on a booking).
	StaffName string
}

// IsOwner reports whether the member owns the business.
func (m Membership) IsOwner() bool { return m.Role == store.RoleOwner }

// Memberships lists the businesses an account is a member of.
func (s *Service) Memberships(ctx context.Context, accountID string) ([]Membership, error) {
	ms, err := s.store.ListAccountMembers(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, nil
	}
	all, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Business, len(all))
	for _, b := range all {
		byID[b.ID] = b
	}
	out := make([]Membership, 0, len(ms))
	for _, m := range ms {
		b, ok := byID[m.BusinessID]
		if !ok {
			continue
		}
		ms := Membership{Member: m, Business: b}
		if m.Role == store.RoleStaff {
			c, err := s.store.LoadCatalogByID(ctx, m.BusinessID)
			if err != nil {
				return nil, err
			}
			if st := staffByID(c, m.StaffID); st != nil {
				ms.StaffName = st.Name
			}
		}
		out = append(out, ms)
	}
	return out, nil
}

// Open returns the account's membership of the business with reference,
// ErrNotFound when there is none (or no such business).
func (s *Service) Open(ctx context.Context, accountID, businessRef string) (Membership, error) {
	ms, err := s.Memberships(ctx, accountID)
	if err != nil {
		return Membership{}, err
	}
	for _, m := range ms {
		if m.Business.Reference == businessRef {
			return m, nil
		}
	}
	return Membership{}, ErrNotFound
}

// Actor is who acts, for the audit log.
type Actor struct {
	AccountID string
	RequestID string
}

func (s *Service) audit(ctx context.Context, tx Tx, m Membership, action, target string, before, after any) error {
	e := store.AuditEvent{ID: store.NewID("aud"), ActorID: m.AccountID, Action: action, Target: target,
		RequestID: requestid.From(ctx), ClientAddr: clientaddr.From(ctx), CreatedAt: s.now()}
	var err error
	if e.Before, err = marshal(before); err != nil {
		return err
	}
	if e.After, err = marshal(after); err != nil {
		return err
	}
	if err := tx.AddAuditEvent(ctx, e); err != nil {
		return fmt.Errorf("business: write audit event: %w", err)
	}
	return nil
}

func invalid(problems ...problem.Problem) error {
	return problem.Invalid(problem.CodeInvalidInput, ErrInvalid.Message, problems...)
}

// notFound maps the store's ErrNotFound to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound.Wrap(err)
	}
	return err
}
