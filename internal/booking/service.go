package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zone rules even on hosts without /usr/share/zoneinfo

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// MaxNotes is the longest notes text a booking takes, in characters.
const MaxNotes = textcheck.NoteMax

// maxCached bounds the catalog cache; past it, an arbitrary entry is evicted
// for each new one.
const maxCached = 5000

// Store is the part of store.Store the engine reads from. Its writes go
// through the caller's transaction (Tx) handed to Create, Reschedule and
// Cancel, so that they commit with the caller's own records.
type Store interface {
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	LoadCatalogByID(ctx context.Context, businessID string) (store.Catalog, error)
	SearchBusinesses(ctx context.Context, q store.BusinessQuery) ([]store.Business, error)
	SuggestSearches(ctx context.Context, q store.BusinessQuery) ([]string, error)
	ListStaffBookings(ctx context.Context, staffIDs []string, from, to time.Time) ([]store.Booking, error)
	StaffDay(ctx context.Context, reference string, staffIDs []string, from, to time.Time) (store.StaffDay, error)
	CalendarBusyDay(ctx context.Context, businessID string, from, to time.Time, known []string) (store.CalendarDay, error)
	ListAccountBookings(ctx context.Context, f store.BookingFilter) ([]store.Booking, error)
	GetBookingByReference(ctx context.Context, reference string) (store.Booking, error)
	GetWaitlistOffer(ctx context.Context, reference string) (store.WaitlistOffer, error)
	ListAccountWaitlist(ctx context.Context, accountID string, limit, offset int) ([]store.WaitlistEntry, error)
	LiveOfferOf(ctx context.Context, entryID string, now time.Time) (store.WaitlistOffer, error)
	ListBusinessBookings(ctx context.Context, f store.BusinessBookingFilter) ([]store.Booking, error)
	ListDuePending(ctx context.Context, now time.Time, limit int) ([]store.Booking, error)
	ListCredentials(ctx context.Context, businessID string) ([]store.Credential, error)
}

var _ Store = store.Store(nil)

// Service is the booking engine. It is safe for concurrent use; one Service
// per process shares one catalog cache.
type Service struct {
	store Store
	clock store.Clock
	// offerMinutes is how long a waitlist offer holds its slot
	// (SetOfferMinutes; 0: DefaultOfferMinutes).
	offerMinutes int

	mu    sync.RWMutex
	cache map[string]*catalogEntry // by business id
	refs  map[string]string        // business id by reference, for cache

	busy busyCache // connected calendars' busy times, by tag
}

// NewService returns a booking engine over s, reading the time from clock
// (store.SystemClock in production).
func NewService(s Store, clock store.Clock) *Service {
	if clock == nil {
		clock = store.SystemClock
	}
	return &Service{store: s, clock: clock, cache: map[string]*catalogEntry{}, refs: map[string]string{}}
}

func (s *Service) now() time.Time { return store.UTC(s.clock()) }

// catalogEntry is a loaded catalog with its indexes, cached until the
// business row's UpdatedAt changes. It is never modified once built.
type catalogEntry struct {
	cat       store.Catalog
	loc       *time.Location
	updatedAt time.Time
	svcByRef  map[string]*store.Service
	svcByID   map[string]*store.Service
	stByRef   map[string]*store.Staff
	stByID    map[string]*store.Staff
}

func newEntry(c store.Catalog) (*catalogEntry, error) {
	loc, err := time.LoadLocation(c.Business.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("business %s: time zone %q: %w", c.Business.Reference, c.Business.TimeZone, err)
	}
	e := &catalogEntry{cat: c, loc: loc, updatedAt: store.UTC(c.Business.UpdatedAt),
		svcByRef: map[string]*store.Service{}, svcByID: map[string]*store.Service{},
		stByRef: map[string]*store.Staff{}, stByID: map[string]*store.Staff{}}
	for i := range e.cat.Services {
		sv := &e.cat.Services[i]
		e.svcByRef[sv.Reference], e.svcByID[sv.ID] = sv, sv
	}
	for i := range e.cat.Staff {
		st := &e.cat.Staff[i]
		e.stByRef[st.Reference], e.stByID[st.ID] = st, st
	}
	return e, nil
}

func (e *catalogEntry) performs(st *store.Staff, serviceID string) bool {
	for _, id := range st.ServiceIDs {
		if id == serviceID {
			return true
		}
	}
	return false
}

// bookable reports business_not_bookable for an agent-off business or a
// restaurant.
func (e *catalogEntry) bookable() *Error {
	b := e.cat.Business
	if !b.AgentBooking {
		err := newErr(problem.CodeBusinessNotBookable, "%s does not take bookings through agents. The person can book with the business directly%s.", b.Name, urlHint(b.BookingURL))
		err.BookingURL = b.BookingURL
		return err
	}
	if b.Category != store.CategoryAppointment {
		err := newErr(problem.CodeBusinessNotBookable, "%s is a %s, not an appointment business; it cannot be booked here. The person can reserve with the business directly%s.", b.Name, b.Category, urlHint(b.BookingURL))
		err.BookingURL = b.BookingURL
		return err
	}
	return nil
}

func urlHint(u string) string {
	if u == "" {
		return ""
	}
	return " at " + u
}

// entry returns the current catalog of a business row, from the cache when
// the row's UpdatedAt matches.
func (s *Service) entry(ctx context.Context, b store.Business) (*catalogEntry, error) {
	s.mu.RLock()
	e := s.cache[b.ID]
	s.mu.RUnlock()
	if e != nil && e.updatedAt.Equal(store.UTC(b.UpdatedAt)) {
		return e, nil
	}
	c, err := s.store.LoadCatalogByID(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("load catalog %s: %w", b.Reference, err)
	}
	if e, err = newEntry(c); err != nil {
		return nil, err
	}
	s.put(b.ID, e)
	return e, nil
}

// put caches an entry unless a newer one is already there.
func (s *Service) put(id string, e *catalogEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.cache[id]; cur != nil && cur.updatedAt.After(e.updatedAt) {
		return
	}
	if _, ok := s.cache[id]; !ok && len(s.cache) >= maxCached {
		for k, old := range s.cache {
			delete(s.cache, k)
			delete(s.refs, old.cat.Business.Reference)
			break
		}
	}
	s.cache[id] = e
	s.refs[e.cat.Business.Reference] = id
}

// cachedByRef returns the cached catalog of a business reference, current
// or not (nil when none is cached): the caller checks its version.
func (s *Service) cachedByRef(ref string) *catalogEntry {
	ref = strings.TrimSpace(ref)
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.cache[s.refs[ref]]
	if e == nil || e.cat.Business.Reference != ref {
		return nil
	}
	return e
}

// entryByRef resolves a business reference (unknown_business when none).
func (s *Service) entryByRef(ctx context.Context, ref string) (*catalogEntry, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fieldErr(problem.CodeInvalidArgument, "business_reference", "business_reference is required. Call search_bookable_business to find one.")
	}
	b, err := s.store.GetBusiness(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fieldErr(problem.CodeUnknownBusiness, "business_reference", "No business has the reference %q. Call search_bookable_business to find the exact reference.", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("get business: %w", err)
	}
	return s.entry(ctx, b)
}

// entryByID returns the catalog of a business id (for a booking's business).
func (s *Service) entryByID(ctx context.Context, id string) (*catalogEntry, error) {
	s.mu.RLock()
	e := s.cache[id]
	s.mu.RUnlock()
	if e != nil {
		b, err := s.store.GetBusiness(ctx, e.cat.Business.Reference)
		if err == nil && b.ID == id {
			return s.entry(ctx, b)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("get business: %w", err)
		}
	}
	c, err := s.store.LoadCatalogByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if e, err = newEntry(c); err != nil {
		return nil, err
	}
	s.put(id, e)
	return e, nil
}

// service resolves a service reference of the business.
func (e *catalogEntry) service(ref string) (*store.Service, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fieldErr(problem.CodeInvalidArgument, "service_reference", "service_reference is required. Call check_business_availability with only the business_reference to list the services.")
	}
	sv := e.svcByRef[ref]
	if sv == nil {
		return nil, fieldErr(problem.CodeUnknownService, "service_reference", "%s has no service with the reference %q. Call check_business_availability with only the business_reference to list its services.", e.cat.Business.Name, ref)
	}
	return sv, nil
}

// staff resolves a staff reference that must perform sv.
func (e *catalogEntry) staff(ref, field string, sv *store.Service) (*store.Staff, error) {
	st := e.stByRef[strings.TrimSpace(ref)]
	if st == nil {
		return nil, fieldErr(problem.CodeUnknownStaff, field, "%s has no staff member with the reference %q. Call check_business_availability with only the business_reference to list its staff.", e.cat.Business.Name, ref)
	}
	if !e.performs(st, sv.ID) {
		return nil, fieldErr(problem.CodeStaffServiceMismatch, field, "%s does not perform %s. Call check_business_availability with the service_reference to see who does.", st.Name, sv.Name)
	}
	return st, nil
}

// staffFor lists the staff members performing sv (all, or only ref).
func (e *catalogEntry) staffFor(sv *store.Service, ref, field string) ([]*store.Staff, error) {
	if strings.TrimSpace(ref) != "" {
		st, err := e.staff(ref, field, sv)
		if err != nil {
			return nil, err
		}
		return []*store.Staff{st}, nil
	}
	var out []*store.Staff
	for i := range e.cat.Staff {
		if st := &e.cat.Staff[i]; e.performs(st, sv.ID) {
			out = append(out, st)
		}
	}
	return out, nil
}

func staffIDs(sts []*store.Staff) []string {
	ids := make([]string, len(sts))
	for i, st := range sts {
		ids[i] = st.ID
	}
	return ids
}

// page validates limit (1..50, 0 → 10) and offset (≥ 0).
func page(limit, offset int) (int, int, error) {
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 50 {
		return 0, 0, fieldErr(problem.CodeInvalidArgument, "limit", "limit must be between 1 and 50.")
	}
	if offset < 0 {
		return 0, 0, fieldErr(problem.CodeInvalidArgument, "offset", "offset must be 0 or more; pass the next_offset of the previous answer.")
	}
	return limit, offset, nil
}

func nextOffset(n, limit, offset int) (bool, *int) {
	if n > limit {
		next := offset + limit
		return true, &next
	}
	return false, nil
}
