package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"

	"github.com/linkslot/linkslot/internal/ical"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
)

// Deliverer is the outbox deliverer of store.ChannelCalendar.
func (s *Service) Deliverer() outbox.Deliverer {
	return outbox.DeliverFunc(func(ctx context.Context, m store.OutboxMessage) outbox.Result {
		if err := s.Write(ctx, m.BookingID); err != nil {
			var p *Problem
			if errors.As(err, &p) && !p.Retry {
				// Still retried: a password fixed within the day lets it through.
				return outbox.Result{Err: errors.New(p.Message)}
			}
			return outbox.Result{Err: fmt.Errorf("calendar write: %s", scrub(err))}
		}
		return outbox.Result{OK: true}
	})
}

// unwanted is a booking status that keeps no event in the calendar.
func unwanted(status string) bool {
	return status == store.BookingCancelled || status == store.BookingDeclined
}

// Write puts the booking, as it is now, into its staff member's CalDAV
// calendar, or deletes it from there once cancelled. Nothing happens when
// the staff member has no CalDAV calendar, or when the calendar already
// shows this version.
func (s *Service) Write(ctx context.Context, bookingID string) error {
	b, err := s.Store.GetBooking(ctx, bookingID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	prev, err := s.Store.GetCalendarEvent(ctx, b.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	remove := unwanted(b.Status)
	if prev.BookingID != "" && prev.StaffID == b.StaffID && prev.Version >= b.Version && prev.Removed == remove {
		return nil // written already
	}
	// A booking moved to another staff member leaves the first one's
	// calendar.
	if prev.BookingID != "" && prev.StaffID != b.StaffID && !prev.Removed {
		if err := s.remove(ctx, prev); err != nil {
			return err
		}
		prev = store.CalendarEvent{}
	}
	cal, err := s.Store.GetStaffCalendar(ctx, b.StaffID)
	if errors.Is(err, store.ErrNotFound) || err == nil && cal.Kind != store.CalendarCalDAV {
		return nil
	}
	if err != nil {
		return err
	}
	if remove {
		if prev.BookingID == "" || prev.Removed {
			return s.Store.PutCalendarEvent(ctx, store.CalendarEvent{BookingID: b.ID, StaffID: b.StaffID, Version: b.Version, Removed: true, UpdatedAt: s.now()})
		}
		prev.Version = b.Version
		return s.remove(ctx, prev)
	}
	ev, err := s.event(ctx, b)
	if err != nil {
		return err
	}
	text, err := ical.Object(ev)
	if err != nil {
		return err
	}
	obj, err := goical.NewDecoder(strings.NewReader(text)).Decode()
	if err != nil {
		return err
	}
	c, err := s.connect(cal)
	if err != nil {
		return err
	}
	path := prev.Href
	if path == "" {
		path = c.objectPath(b.Reference)
	}
	// The first write creates the object only if none is there; later
	// ones replace only the version Linkslot wrote.
	cond := withHeaders(ctx, "If-None-Match", "*")
	if prev.Href != "" && !prev.Removed && prev.ETag != "" {
		cond = withHeaders(ctx, "If-Match", quote(prev.ETag))
	}
	co, err := c.cal.PutCalendarObject(cond, path, obj)
	if err != nil && c.http.lastStatus() == http.StatusPreconditionFailed {
		// The object is there already (a write whose outcome was not
		// recorded) or was edited in the calendar: the booking is what it
		// shows, so it is written over, still as one object.
		co, err = c.cal.PutCalendarObject(ctx, path, obj)
	}
	if err != nil {
		return explain(err, c.http.lastStatus())
	}
	return s.Store.PutCalendarEvent(ctx, store.CalendarEvent{BookingID: b.ID, StaffID: b.StaffID, Href: path, ETag: co.ETag,
		Version: b.Version, UpdatedAt: s.now()})
}

// remove deletes the event of prev from its staff member's calendar.
func (s *Service) remove(ctx context.Context, prev store.CalendarEvent) error {
	cal, err := s.Store.GetStaffCalendar(ctx, prev.StaffID)
	if errors.Is(err, store.ErrNotFound) || err == nil && cal.Kind != store.CalendarCalDAV {
		prev.Removed, prev.UpdatedAt = true, s.now()
		return s.Store.PutCalendarEvent(ctx, prev)
	}
	if err != nil {
		return err
	}
	c, err := s.connect(cal)
	if err != nil {
		return err
	}
	if prev.Href != "" {
		// Only the version Linkslot wrote is deleted: an event the
		// calendar's owner changed since (a note added, moved by hand)
		// answers 412 and is left in the calendar, theirs now.
		cond := ctx
		if prev.ETag != "" {
			cond = withHeaders(ctx, "If-Match", quote(prev.ETag))
		}
		c.http.resetStatus()
		err = c.dav.RemoveAll(cond, prev.Href)
		st := c.http.lastStatus()
		switch {
		case err == nil, st == http.StatusNotFound, st == http.StatusGone:
			// Deleted, or gone already.
		case st == http.StatusPreconditionFailed:
			s.log().WarnContext(ctx, "calendar: the cancelled booking's event was changed in the calendar; left there",
				"staff", prev.StaffID, "booking", prev.BookingID, "href", prev.Href)
		default:
			return explain(err, st)
		}
	}
	prev.Removed, prev.UpdatedAt = true, s.now()
	return s.Store.PutCalendarEvent(ctx, prev)
}

// event is the booking as the business's calendar shows it: the UID of the
// person's invitation (REFERENCE@ISSUER-HOST), SEQUENCE the version, the
// service and the booking reference, and no personal data of the person.
func (s *Service) event(ctx context.Context, b store.Booking) (ical.Event, error) {
	cat, err := s.Store.LoadCatalogByID(ctx, b.BusinessID)
	if err != nil {
		return ical.Event{}, err
	}
	loc, err := time.LoadLocation(cat.Business.TimeZone)
	if err != nil {
		return ical.Event{}, err
	}
	service, staff := "Appointment", ""
	for _, sv := range cat.Services {
		if sv.ID == b.ServiceID {
			service = sv.Name
		}
	}
	for _, st := range cat.Staff {
		if st.ID == b.StaffID {
			staff = st.Name
		}
	}
	desc := fmt.Sprintf("Booked through Linkslot: booking %s", b.Reference)
	if staff != "" {
		desc += " with " + staff
	}
	return ical.Event{UID: b.Reference + "@" + s.Host, Sequence: b.Version, Summary: service + " (" + b.Reference + ")",
		Location: cat.Business.Address, Description: desc + ".", Start: b.StartsAt, End: b.EndsAt, Zone: loc,
		Tentative: b.Status == store.BookingPending, Stamp: s.now()}, nil
}
