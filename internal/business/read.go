package business

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// MaxListDays bounds the date range of one bookings list, and MaxRows the
// bookings it shows.
const (
	MaxListDays = 93
	MaxRows     = 500
)

// BookingRow is one booking as the console shows it, its instants in the
// business's time zone.
type BookingRow struct {
	Reference    string
	Status       string
	Version      int
	StartsAt     time.Time
	EndsAt       time.Time
	StaffID      string
	StaffName    string
	ServiceName  string
	Notes        string
	CancelReason string
	AccountID    string
	LinkID       string
}

// BookingDetail is one booking with who booked it and how.
type BookingDetail struct {
	BookingRow
	PersonEmail string
	// Via is how it was booked: the app's name, "the web" or "an import".
	Via       string
	CreatedAt time.Time
	Events    []store.BookingEvent
	// RespondBy is when a pending booking is declined unanswered.
	RespondBy *time.Time
}

// Filter selects bookings for the list and the calendars. From and To are
// local dates (inclusive) in the business's time zone.
type Filter struct {
	From, To time.Time // local midnight of the first and the last day
	StaffID  string
	Status   string // empty: every state
}

// Staff returns the staff members the member may see: all for owners,
// their own record for staff.
func (m Membership) visibleStaff(c store.Catalog) []store.Staff {
	if m.IsOwner() {
		return c.Staff
	}
	for _, st := range c.Staff {
		if st.ID == m.StaffID {
			return []store.Staff{st}
		}
	}
	return nil
}

// Catalog loads the member's business with the staff it may see (and only
// their hours and time off).
func (s *Service) Catalog(ctx context.Context, m Membership) (store.Catalog, error) {
	c, err := s.store.LoadCatalogByID(ctx, m.BusinessID)
	if err != nil {
		return store.Catalog{}, err
	}
	if !m.IsOwner() {
		c.Staff = m.visibleStaff(c)
		keep := func(id string) bool { return len(c.Staff) == 1 && c.Staff[0].ID == id }
		for id := range c.StaffHours {
			if !keep(id) {
				delete(c.StaffHours, id)
			}
		}
		for id := range c.StaffTimeOff {
			if !keep(id) {
				delete(c.StaffTimeOff, id)
			}
		}
	}
	return c, nil
}

// Location is the business's time zone.
func Location(b store.Business) *time.Location {
	if loc, err := time.LoadLocation(b.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// Bookings lists the bookings the member may see in f, earliest first.
// A staff member always gets their own; an owner filtering by a staff
// member of another business gets ErrNotFound.
func (s *Service) Bookings(ctx context.Context, m Membership, f Filter) ([]BookingRow, store.Catalog, error) {
	c, err := s.Catalog(ctx, m)
	if err != nil {
		return nil, store.Catalog{}, err
	}
	var ps []problem.Problem
	if f.To.Before(f.From) {
		ps = append(ps, problem.Problem{Path: "to", Message: "The last day comes before the first."})
	} else if f.To.Sub(f.From) > MaxListDays*24*time.Hour {
		ps = append(ps, problem.Problem{Path: "to", Message: "Choose at most 93 days at a time."})
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		ps = append(ps, problem.Problem{Path: "status", Message: "Choose a state from the list."})
	}
	if len(ps) > 0 {
		return nil, c, invalid(ps...)
	}
	staffID := f.StaffID
	if !m.IsOwner() {
		if staffID != "" && staffID != m.StaffID {
			return nil, c, ErrNotFound
		}
		staffID = m.StaffID
	} else if staffID != "" && staffByID(c, staffID) == nil {
		return nil, c, ErrNotFound
	}
	q := store.BusinessBookingFilter{BusinessID: m.BusinessID, StaffID: staffID,
		From: f.From, To: f.To.AddDate(0, 0, 1), Limit: MaxRows}
	if f.Status != "" {
		q.Statuses = []string{f.Status}
	}
	bs, err := s.store.ListBusinessBookings(ctx, q)
	if err != nil {
		return nil, c, err
	}
	loc := Location(c.Business)
	out := make([]BookingRow, len(bs))
	for i, b := range bs {
		out[i] = row(c, loc, b)
	}
	return out, c, nil
}

// Statuses are the booking states the list filters by.
var Statuses = []string{store.BookingPending, store.BookingConfirmed, store.BookingCompleted, store.BookingNoShow, store.BookingDeclined, store.BookingCancelled}

func staffByID(c store.Catalog, id string) *store.Staff {
	for i := range c.Staff {
		if c.Staff[i].ID == id {
			return &c.Staff[i]
		}
	}
	return nil
}

func row(c store.Catalog, loc *time.Location, b store.Booking) BookingRow {
	r := BookingRow{Reference: b.Reference, Status: b.Status, Version: b.Version, StartsAt: b.StartsAt.In(loc), EndsAt: b.EndsAt.In(loc),
		StaffID: b.StaffID, Notes: b.Notes, CancelReason: b.CancelReason, AccountID: b.AccountID, LinkID: b.LinkID}
	if st := staffByID(c, b.StaffID); st != nil {
		r.StaffName = st.Name
	}
	for _, sv := range c.Services {
		if sv.ID == b.ServiceID {
			r.ServiceName = sv.Name
		}
	}
	return r
}

// Booking returns one booking of the member's reach: ErrNotFound for a
// booking of another business, or of another staff member for staff.
func (s *Service) Booking(ctx context.Context, m Membership, reference string) (BookingDetail, error) {
	b, err := s.store.GetBookingByReference(ctx, reference)
	if err != nil {
		return BookingDetail{}, notFound(err)
	}
	if b.BusinessID != m.BusinessID || (!m.IsOwner() && b.StaffID != m.StaffID) {
		return BookingDetail{}, ErrNotFound
	}
	c, err := s.store.LoadCatalogByID(ctx, m.BusinessID)
	if err != nil {
		return BookingDetail{}, err
	}
	d := BookingDetail{BookingRow: row(c, Location(c.Business), b), CreatedAt: b.CreatedAt.In(Location(c.Business)), Via: "an import"}
	if b.AccountID != "" {
		a, err := s.store.GetAccount(ctx, b.AccountID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return BookingDetail{}, err
		}
		d.PersonEmail = a.Email
		d.Via = "the web"
	}
	if b.LinkID != "" {
		d.Via = "an app"
		if l, err := s.store.GetLink(ctx, b.LinkID); err == nil {
			if cl, err := s.store.GetClient(ctx, l.ClientID); err == nil && cl.Name != "" {
				d.Via = cl.Name
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return BookingDetail{}, err
		}
	}
	if d.Events, err = s.store.ListBookingEvents(ctx, b.ID); err != nil {
		return BookingDetail{}, err
	}
	loc := Location(c.Business)
	for i := range d.Events {
		d.Events[i].At = d.Events[i].At.In(loc)
	}
	if b.RespondBy != nil {
		t := b.RespondBy.In(loc)
		d.RespondBy = &t
	}
	return d, nil
}

// Members lists the members of the owner's business (ErrNotFound for
// staff: only owners manage members).
func (s *Service) Members(ctx context.Context, m Membership) ([]store.Member, error) {
	if !m.IsOwner() {
		return nil, ErrNotFound
	}
	return s.store.ListBusinessMembers(ctx, m.BusinessID)
}
