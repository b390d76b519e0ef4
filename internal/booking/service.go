package booking

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// MaxNotes is the longest notes text a booking takes, in characters.
const MaxNotes = 500

// Service is the booking engine. It is safe for concurrent use; one Service
// per process shares one catalog cache.
type Service struct {
	store store.Store
	clock store.Clock

	mu    sync.RWMutex
	cache map[string]*catalogEntry // by business id
}

// NewService returns a booking engine over s, reading the time from clock
// (store.SystemClock in production).
func NewService(s store.Store, clock store.Clock) *Service {
	if clock == nil {
		clock = store.SystemClock
	}
	return &Service{store: s, clock: clock, cache: map[string]*catalogEntry{}}
}

func (s *Service) now() time.Time { return store.UTC(s.clock()) }

var errTODO = errors.New("booking: not implemented yet")

// SearchBusinesses finds agent-enabled businesses by free text and city.
// limit is 1..50 (0 means 10); offset ≥ 0.
func (s *Service) SearchBusinesses(ctx context.Context, query, city string, limit, offset int) (BusinessPage, error) {
	return BusinessPage{}, errTODO
}

// Catalog describes a business, its services and its staff.
func (s *Service) Catalog(ctx context.Context, businessRef string) (CatalogView, error) {
	return CatalogView{}, errTODO
}

// Availability lists the open times of a service on a local date, per staff
// member.
func (s *Service) Availability(ctx context.Context, q AvailabilityQuery) (Availability, error) {
	return Availability{}, errTODO
}

// MyBookings lists a person's bookings: status is upcoming (default), past,
// cancelled or all; limit 1..50 (0 means 10).
func (s *Service) MyBookings(ctx context.Context, accountID, status string, limit, offset int) (BookingPage, error) {
	return BookingPage{}, errTODO
}

// MyBooking returns one of the person's bookings. Another person's booking
// answers booking_not_found, exactly like a missing one.
func (s *Service) MyBooking(ctx context.Context, accountID, bookingRef string) (BookingView, error) {
	return BookingView{}, errTODO
}

// RescheduleAvailability lists the times a booking can move to on a local
// date: the booking's own span does not block them. staffRef empty keeps
// the booking's staff member.
func (s *Service) RescheduleAvailability(ctx context.Context, accountID, bookingRef, localDate, staffRef string) (Availability, error) {
	return Availability{}, errTODO
}

// PlanCreate validates a create and computes its summary; it writes nothing.
func (s *Service) PlanCreate(ctx context.Context, r CreateRequest) (CreatePlan, error) {
	return CreatePlan{}, errTODO
}

// Create executes a plan through tx (a store bound to the caller's
// transaction, or the plain store). It re-checks the slot with the same
// engine and inserts the booking with a fresh reference and version 1.
func (s *Service) Create(ctx context.Context, tx store.Store, p CreatePlan) (store.Booking, error) {
	return store.Booking{}, errTODO
}

// PlanReschedule validates a move and computes its summary; it writes nothing.
func (s *Service) PlanReschedule(ctx context.Context, r RescheduleRequest) (ReschedulePlan, error) {
	return ReschedulePlan{}, errTODO
}

// Reschedule moves the booking in place (same reference, version+1) and
// records a history event keeping the previous time. A booking changed since
// the plan answers booking_changed.
func (s *Service) Reschedule(ctx context.Context, tx store.Store, p ReschedulePlan) (store.Booking, error) {
	return store.Booking{}, errTODO
}

// PlanCancel validates a cancellation and computes its fee; it writes
// nothing. An already cancelled booking is not an error: the plan says
// AlreadyCancelled.
func (s *Service) PlanCancel(ctx context.Context, r CancelRequest) (CancelPlan, error) {
	return CancelPlan{}, errTODO
}

// Cancel cancels the booking (version+1) with the plan's fee. A plan with
// AlreadyCancelled returns the booking unchanged; a booking cancelled
// concurrently answers already_cancelled.
func (s *Service) Cancel(ctx context.Context, tx store.Store, p CancelPlan) (store.Booking, error) {
	return store.Booking{}, errTODO
}

// View renders a stored booking for its owner (names, zone, local times).
func (s *Service) View(ctx context.Context, b store.Booking) (BookingView, error) {
	return BookingView{}, errTODO
}

// catalogEntry is a loaded catalog with its indexes, cached until the
// business row's UpdatedAt changes.
type catalogEntry struct {
	cat       store.Catalog
	loc       *time.Location
	updatedAt time.Time
	services  map[string]*store.Service // by reference
	svcByID   map[string]*store.Service
	staff     map[string]*store.Staff // by reference
	staffByID map[string]*store.Staff
}
