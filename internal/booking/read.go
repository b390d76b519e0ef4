package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// SearchBusinesses finds agent-enabled businesses by free text and city.
// limit is 1..50 (0 means 10); offset ≥ 0.
func (s *Service) SearchBusinesses(ctx context.Context, query, city string, limit, offset int) (BusinessPage, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return BusinessPage{}, err
	}
	if utf8.RuneCountInString(query) > maxSearchText {
		return BusinessPage{}, fieldErr(problem.CodeInvalidArgument, "query", "query is too long; use at most 200 characters.")
	}
	if query != "" && !hasWord(query) {
		return BusinessPage{}, fieldErr(problem.CodeInvalidArgument, "query", "query has no letters or digits; describe the business or service, e.g. 'haircut'.")
	}
	if utf8.RuneCountInString(city) > maxSearchText {
		return BusinessPage{}, fieldErr(problem.CodeInvalidArgument, "city", "city is too long; use at most 200 characters.")
	}
	q := store.BusinessQuery{Text: query, City: city, Limit: limit, Offset: offset}
	rows, err := s.store.SearchBusinesses(ctx, q)
	if err != nil {
		return BusinessPage{}, fmt.Errorf("search businesses: %w", err)
	}
	p := BusinessPage{Results: []BusinessSummary{}}
	p.HasMore, p.NextOffset = nextOffset(len(rows), limit, offset)
	for i, b := range rows {
		if i == limit {
			break
		}
		p.Results = append(p.Results, BusinessSummary{Reference: b.Reference, Name: b.Name, Description: b.Description,
			Category: b.Category, City: b.City, Address: b.Address, TimeZone: b.TimeZone})
	}
	if len(rows) == 0 && offset == 0 {
		if p.Suggestions, err = s.store.SuggestSearches(ctx, q); err != nil {
			return BusinessPage{}, fmt.Errorf("suggest searches: %w", err)
		}
	}
	return p, nil
}

// maxSearchText is the longest query or city searched, in characters.
const maxSearchText = 200

// hasWord reports whether s has a letter or a digit: a query of nothing
// else (punctuation, symbols) matches no word and is refused.
func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// Catalog describes a business, its services and its staff. A business no
// agent can book — agent booking off, or a restaurant — answers
// business_not_bookable, as search never lists it.
func (s *Service) Catalog(ctx context.Context, businessRef string) (CatalogView, error) {
	e, err := s.entryByRef(ctx, businessRef)
	if err != nil {
		return CatalogView{}, err
	}
	b := e.cat.Business
	if err := e.bookable(); err != nil {
		return CatalogView{}, err
	}
	v := CatalogView{Business: BusinessView{Reference: b.Reference, Name: b.Name, Description: b.Description,
		Category: b.Category, City: b.City, Address: b.Address, TimeZone: b.TimeZone, Bookable: e.bookable() == nil,
		MinNoticeMinutes: b.MinNoticeMinutes, HorizonDays: b.HorizonDays, SlotIntervalMinutes: int(e.interval().Minutes()),
		CancellationWindowMinutes: b.CancellationWindowMinutes, CancellationFeeCents: b.CancellationFeeCents,
		Currency: b.Currency, CancellationPolicy: b.CancellationPolicy, PrivacyNotice: b.PrivacyNotice, BookingURL: b.BookingURL,
		ConfirmationWindowMinutes: int(b.ConfirmationWindow() / time.Minute)},
		Services: []ServiceView{}, Staff: []StaffView{}}
	creds, err := s.store.ListCredentials(ctx, b.ID)
	if err != nil {
		return CatalogView{}, fmt.Errorf("credentials: %w", err)
	}
	v.Business.Credentials = credentialsView(creds)
	if v.Business.HorizonDays <= 0 {
		v.Business.HorizonDays = defaultHorizonDays
	}
	for _, sv := range e.cat.Services {
		refs := []string{}
		for i := range e.cat.Staff {
			if st := &e.cat.Staff[i]; e.performs(st, sv.ID) {
				refs = append(refs, st.Reference)
			}
		}
		v.Services = append(v.Services, ServiceView{Reference: sv.Reference, Name: sv.Name, Description: sv.Description,
			DurationMinutes: sv.DurationMinutes, PriceCents: sv.PriceCents, Currency: sv.Currency, DepositRequired: sv.DepositRequired,
			RequiresConfirmation: sv.RequiresConfirmation, BufferBeforeMinutes: sv.BufferBeforeMinutes, BufferAfterMinutes: sv.BufferAfterMinutes, StaffReferences: refs})
	}
	for _, st := range e.cat.Staff {
		refs := []string{}
		for _, id := range st.ServiceIDs {
			if sv := e.svcByID[id]; sv != nil {
				refs = append(refs, sv.Reference)
			}
		}
		v.Staff = append(v.Staff, StaffView{Reference: st.Reference, Name: st.Name, ServiceReferences: refs})
	}
	return v, nil
}

// Availability lists the open times of a service on a local date, per staff
// member. One statement on a warm cache (store.StaffDay), whatever the
// staff count; a second when the business's connected calendars changed
// since that day's busy times were last read (calendarBusy); three when
// the catalog has to be loaded.
func (s *Service) Availability(ctx context.Context, q AvailabilityQuery) (Availability, error) {
	if e := s.cachedByRef(q.BusinessRef); e != nil && e.bookable() == nil {
		if a, ok, err := s.availabilityCurrent(ctx, e, q); ok || err != nil {
			return a, err
		}
	}
	e, err := s.entryByRef(ctx, q.BusinessRef)
	if err != nil {
		return Availability{}, err
	}
	if err := e.bookable(); err != nil {
		return Availability{}, err
	}
	return s.availability(ctx, e, q.ServiceRef, q.LocalDate, q.StaffRef, "with_staff_reference", nil)
}

// availabilityCurrent answers q from the cached catalog e with one
// statement, the business row's version read beside the bookings. ok is
// false, with nothing answered, when the version shows e is stale or the
// business is gone, and when q does not check out against e (an unknown
// service, say): the caller then answers from the current catalog, whose
// answer and errors are authoritative.
func (s *Service) availabilityCurrent(ctx context.Context, e *catalogEntry, q AvailabilityQuery) (Availability, bool, error) {
	p, err := e.planDay(q.ServiceRef, q.LocalDate, q.StaffRef, "with_staff_reference", nil)
	if err != nil {
		return Availability{}, false, nil
	}
	d, err := s.store.StaffDay(ctx, e.cat.Business.Reference, staffIDs(p.staff), p.from, p.to)
	if err != nil {
		return Availability{}, false, fmt.Errorf("list bookings: %w", err)
	}
	if !d.Found || d.BusinessID != e.cat.Business.ID || !d.UpdatedAt.Equal(e.updatedAt) {
		return Availability{}, false, nil
	}
	var cal *busyDay
	if d.CalendarTag != "" {
		if cal, err = s.calendarBusy(ctx, d.BusinessID, d.CalendarTag, p.from, p.to); err != nil {
			return Availability{}, false, fmt.Errorf("list calendar busy times: %w", err)
		}
	}
	blocks := make([]block, len(d.Busy))
	for i, b := range d.Busy {
		blocks[i] = block{id: b.BookingID, staffID: b.StaffID, start: b.BlockStart, end: b.BlockEnd}
	}
	return s.fillDay(e, p, blocks, cal), true, nil
}

// dayPlan is an availability question checked against a catalog: the
// service, the date, the staff members to list and the window of bookings
// that can block their slots.
type dayPlan struct {
	sv       *store.Service
	d        date
	staff    []*store.Staff
	from, to time.Time
	ignore   string // the booking being moved, which blocks nothing
	answer   Availability
}

func (e *catalogEntry) planDay(serviceRef, localDate, staffRef, staffField string, moving *store.Booking) (dayPlan, error) {
	var p dayPlan
	var err error
	if moving != nil {
		p.sv = e.svcByID[moving.ServiceID]
		if p.sv == nil {
			return dayPlan{}, fmt.Errorf("booking %s: service %s not in catalog", moving.Reference, moving.ServiceID)
		}
	} else if p.sv, err = e.service(serviceRef); err != nil {
		return dayPlan{}, err
	}
	d, ok := parseDate(strings.TrimSpace(localDate))
	if !ok {
		return dayPlan{}, fieldErr(problem.CodeInvalidArgument, "local_date", "local_date must be a calendar date YYYY-MM-DD in the business's time zone (%s).", e.cat.Business.TimeZone)
	}
	p.d = d
	if p.staff, err = e.staffFor(p.sv, staffRef, staffField); err != nil {
		return dayPlan{}, err
	}
	p.answer = Availability{BusinessReference: e.cat.Business.Reference, BusinessName: e.cat.Business.Name,
		ServiceReference: p.sv.Reference, ServiceName: p.sv.Name, DurationMinutes: p.sv.DurationMinutes,
		TimeZone: e.cat.Business.TimeZone, LocalDate: d.String(), Staff: []StaffSlots{}}
	if moving != nil {
		p.answer.BookingReference, p.ignore = moving.Reference, moving.ID
	}
	p.from, p.to = e.dayBounds(d, p.sv)
	return p, nil
}

// fillDay lists each planned staff member's open slots around blocks and
// the busy times of their connected calendars in cal (nil: none; read
// only).
func (s *Service) fillDay(e *catalogEntry, p dayPlan, blocks []block, cal *busyDay) Availability {
	byStaff := map[string][]block{}
	for _, b := range blocks {
		byStaff[b.staffID] = append(byStaff[b.staffID], b)
	}
	a := p.answer
	r := e.rulesAt(s.now())
	for _, st := range p.staff {
		own := byStaff[st.ID]
		if cal != nil {
			if c := cal.staff[st.ID].blocks; len(c) > 0 {
				own = append(own[:len(own):len(own)], c...) // a copy: cal is shared
			}
		}
		sl := e.slots(st, p.sv, p.d, own, p.ignore, &r)
		if sl == nil {
			sl = []Slot{}
		}
		a.Staff = append(a.Staff, StaffSlots{StaffReference: st.Reference, StaffName: st.Name, Slots: sl})
	}
	return a
}

func (s *Service) availability(ctx context.Context, e *catalogEntry, serviceRef, localDate, staffRef, staffField string, moving *store.Booking) (Availability, error) {
	p, err := e.planDay(serviceRef, localDate, staffRef, staffField, moving)
	if err != nil {
		return Availability{}, err
	}
	bks, err := s.store.ListStaffBookings(ctx, staffIDs(p.staff), p.from, p.to)
	if err != nil {
		return Availability{}, fmt.Errorf("list bookings: %w", err)
	}
	return s.fillDay(e, p, blocksOf(bks), nil), nil
}

// MyBookings lists a person's bookings: status is upcoming (default), past,
// cancelled or all; limit 1..50 (0 means 10).
func (s *Service) MyBookings(ctx context.Context, accountID, status string, limit, offset int) (BookingPage, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return BookingPage{}, err
	}
	switch status {
	case "":
		status = "upcoming"
	case "upcoming", "past", "cancelled", "pending", "all":
	default:
		return BookingPage{}, fieldErr(problem.CodeInvalidArgument, "status", "status must be upcoming, past, cancelled, pending or all.")
	}
	if accountID == "" {
		return BookingPage{}, errors.New("booking: MyBookings without an account")
	}
	rows, err := s.store.ListAccountBookings(ctx, store.BookingFilter{AccountID: accountID, Status: status, Now: s.now(), Limit: limit, Offset: offset})
	if err != nil {
		return BookingPage{}, fmt.Errorf("list bookings: %w", err)
	}
	p := BookingPage{Results: []BookingView{}}
	p.HasMore, p.NextOffset = nextOffset(len(rows), limit, offset)
	entries := map[string]*catalogEntry{}
	for i, b := range rows {
		if i == limit {
			break
		}
		e := entries[b.BusinessID]
		if e == nil {
			if e, err = s.entryByID(ctx, b.BusinessID); err != nil {
				return BookingPage{}, err
			}
			entries[b.BusinessID] = e
		}
		p.Results = append(p.Results, e.view(b))
	}
	return p, nil
}

// MyBooking returns one of the person's bookings. Another person's booking
// answers booking_not_found, exactly like a missing one.
func (s *Service) MyBooking(ctx context.Context, accountID, bookingRef string) (BookingView, error) {
	b, e, err := s.ownBooking(ctx, accountID, bookingRef)
	if err != nil {
		return BookingView{}, err
	}
	return e.view(b), nil
}

// RescheduleAvailability lists the times a booking can move to on a local
// date: the booking's own span does not block them. staffRef empty keeps
// the booking's staff member.
func (s *Service) RescheduleAvailability(ctx context.Context, accountID, bookingRef, localDate, staffRef string) (Availability, error) {
	b, e, err := s.ownBooking(ctx, accountID, bookingRef)
	if err != nil {
		return Availability{}, err
	}
	if err := movable(b, s.now()); err != nil {
		return Availability{}, err
	}
	if err := e.bookable(); err != nil {
		return Availability{}, err
	}
	if strings.TrimSpace(staffRef) == "" {
		if st := e.stByID[b.StaffID]; st != nil {
			staffRef = st.Reference
		}
	}
	return s.availability(ctx, e, "", localDate, staffRef, "with_staff_reference", &b)
}

// View renders a stored booking for its owner (names, zone, local times).
func (s *Service) View(ctx context.Context, b store.Booking) (BookingView, error) {
	e, err := s.entryByID(ctx, b.BusinessID)
	if err != nil {
		return BookingView{}, err
	}
	return e.view(b), nil
}

// ownBooking finds a booking of the account by reference; any other
// booking answers booking_not_found.
func (s *Service) ownBooking(ctx context.Context, accountID, ref string) (store.Booking, *catalogEntry, error) {
	ref = NormalizeReference(ref)
	if ref == "" {
		return store.Booking{}, nil, fieldErr(problem.CodeInvalidArgument, "booking_reference", "booking_reference is required. Call search_my_bookings to list your bookings.")
	}
	b, err := s.store.GetBookingByReference(ctx, ref)
	if errors.Is(err, store.ErrNotFound) || err == nil && (accountID == "" || b.AccountID != accountID) {
		e := errBookingNotFound()
		e.Field = "booking_reference"
		return store.Booking{}, nil, e
	}
	if err != nil {
		return store.Booking{}, nil, fmt.Errorf("get booking: %w", err)
	}
	e, err := s.entryByID(ctx, b.BusinessID)
	if err != nil {
		return store.Booking{}, nil, err
	}
	return b, e, nil
}

// view renders a booking with the catalog's names, in the business's zone.
func (e *catalogEntry) view(b store.Booking) BookingView {
	v := BookingView{Reference: b.Reference, Status: b.Status, Version: b.Version,
		BusinessReference: e.cat.Business.Reference, BusinessName: e.cat.Business.Name,
		TimeZone: e.cat.Business.TimeZone, StartsAt: b.StartsAt.In(e.loc), EndsAt: b.EndsAt.In(e.loc),
		PriceCents: b.PriceCents, Currency: b.Currency, Notes: b.Notes, PaymentState: b.PaymentState,
		CancellationPolicy: e.cat.Business.CancellationPolicy, CancelReason: b.CancelReason,
		CancellationFeeCents: b.CancellationFeeCents, CreatedAt: b.CreatedAt.In(e.loc), Record: b}
	if v.PaymentState == "" {
		v.PaymentState = store.PaymentNone
	}
	if sv := e.svcByID[b.ServiceID]; sv != nil {
		v.ServiceReference, v.ServiceName = sv.Reference, sv.Name
	}
	if st := e.stByID[b.StaffID]; st != nil {
		v.StaffReference, v.StaffName = st.Reference, st.Name
	}
	if b.CancelledAt != nil {
		t := b.CancelledAt.In(e.loc)
		v.CancelledAt = &t
	}
	if b.RespondBy != nil {
		t := b.RespondBy.In(e.loc)
		v.RespondBy = &t
	}
	return v
}
