package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// What a business does with its bookings (docs/reference.md "Bookings the
// business answers"). Each is one transition of the booking's status:
//
//	confirm   pending → confirmed, before the start
//	decline   pending → declined, frees the slot
//	complete  confirmed → completed, once the appointment has started
//	no_show   confirmed → no_show, once the appointment has started
//	cancel    pending or confirmed → cancelled, before the start, frees the slot
//
// Declined and cancelled bookings free their slot at once; completed and
// no-show ones free what is left of theirs (the business is done with the
// appointment, so the rest of its time may be booked). Every transition
// bumps the version, so every grant issued before it dies.
const (
	BusinessConfirm  = "confirm"
	BusinessDecline  = "decline"
	BusinessComplete = "complete"
	BusinessNoShow   = "no_show"
	BusinessCancel   = "cancel"
)

// BusinessActor is who acts for a business: the business, and for a staff
// member the staff record whose bookings they may touch (empty: all of the
// business's, as an owner).
type BusinessActor struct {
	BusinessID string
	StaffID    string
}

// BusinessRequest asks for one business action on a booking.
type BusinessRequest struct {
	Actor      BusinessActor
	BookingRef string
	Action     string
	Reason     string // decline and cancel; told to the person
	// Version is the booking version the console showed; 0 skips the
	// check (the expiry job, which reads the booking itself).
	Version int
}

// BusinessPlan is a validated business action, ready to execute.
type BusinessPlan struct {
	Request BusinessRequest
	Facts   Facts
	Current store.Booking
	Next    store.Booking

	entry *catalogEntry
}

// Business is the booking's business, as its catalog was read.
func (p BusinessPlan) Business() store.Business { return p.entry.business() }

// errBusinessBookingNotFound is what a member gets for a booking that is
// not theirs to see: the same as for one that does not exist.
func errBusinessBookingNotFound() *Error {
	e := newErr(problem.CodeBookingNotFound, "No booking of this business has that reference. Open the bookings list to find it.")
	e.Field = "booking_reference"
	return e
}

// businessBooking finds a booking of the actor's business (and staff
// member) by reference; any other booking answers booking_not_found.
func (s *Service) businessBooking(ctx context.Context, a BusinessActor, ref string) (store.Booking, *catalogEntry, error) {
	ref = NormalizeReference(ref)
	if a.BusinessID == "" {
		return store.Booking{}, nil, errors.New("booking: business action without a business")
	}
	if ref == "" {
		return store.Booking{}, nil, fieldErr(problem.CodeInvalidArgument, "booking_reference", "A booking reference is required.")
	}
	b, err := s.store.GetBookingByReference(ctx, ref)
	if errors.Is(err, store.ErrNotFound) || err == nil && (b.BusinessID != a.BusinessID || a.StaffID != "" && b.StaffID != a.StaffID) {
		return store.Booking{}, nil, errBusinessBookingNotFound()
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

func errTransition(format string, args ...any) *Error {
	return newErr(problem.CodeInvalidTransition, format, args...)
}

// transition returns b after action at now, or the refusal that leaves it
// as it is.
func transition(b store.Booking, action, reason string, now time.Time) (store.Booking, error) {
	started := !b.StartsAt.After(now)
	n := b
	switch action {
	case BusinessConfirm:
		switch {
		case b.Status != store.BookingPending:
			return b, errTransition("Booking %s is %s, not waiting for an answer, so it cannot be confirmed.", b.Reference, statusWords(b.Status))
		case started:
			return b, errTransition("Booking %s has already started, so it can no longer be confirmed.", b.Reference)
		}
		n.Status, n.RespondBy = store.BookingConfirmed, nil
	case BusinessDecline:
		if b.Status != store.BookingPending {
			return b, errTransition("Booking %s is %s, not waiting for an answer, so it cannot be declined. Cancel it instead if it is confirmed.", b.Reference, statusWords(b.Status))
		}
		n.Status, n.RespondBy, n.CancelReason, n.CancelledAt = store.BookingDeclined, nil, reason, &now
	case BusinessComplete, BusinessNoShow:
		switch {
		case b.Status != store.BookingConfirmed:
			return b, errTransition("Booking %s is %s; only a confirmed booking can be marked %s.", b.Reference, statusWords(b.Status), statusWords(statusOf(action)))
		case !started:
			return b, errTransition("Booking %s has not started yet; it can be marked %s once its time has come.", b.Reference, statusWords(statusOf(action)))
		}
		n.Status = statusOf(action)
	case BusinessCancel:
		switch {
		case !store.HoldsSlot(b.Status):
			return b, errTransition("Booking %s is %s, so there is nothing to cancel.", b.Reference, statusWords(b.Status))
		case started:
			return b, errTransition("Booking %s has already started, so it can no longer be cancelled; mark it completed or a no-show instead.", b.Reference)
		case strings.TrimSpace(reason) == "":
			return b, fieldErr(problem.CodeInvalidArgument, "reason", "Give the person a reason for cancelling booking %s.", b.Reference)
		}
		n.Status, n.RespondBy, n.CancelReason, n.CancelledAt = store.BookingCancelled, nil, reason, &now
	default:
		return b, fieldErr(problem.CodeInvalidArgument, "action", "Unknown action %q: use confirm, decline, complete, no_show or cancel.", action)
	}
	n.Version, n.UpdatedAt = b.Version+1, now
	return n, nil
}

func statusOf(action string) string {
	switch action {
	case BusinessComplete:
		return store.BookingCompleted
	case BusinessNoShow:
		return store.BookingNoShow
	}
	return action
}

// statusWords names a status in a sentence.
func statusWords(status string) string {
	switch status {
	case store.BookingNoShow:
		return "a no-show"
	case store.BookingPending:
		return "pending"
	}
	return status
}

// PlanBusiness validates a business action and computes its facts; it
// writes nothing. A booking of another business, or of another staff
// member for a staff actor, answers booking_not_found; a Version other
// than the booking's, booking_changed; a transition the status does not
// allow, invalid_transition.
func (s *Service) PlanBusiness(ctx context.Context, r BusinessRequest) (BusinessPlan, error) {
	cur, e, err := s.businessBooking(ctx, r.Actor, r.BookingRef)
	if err != nil {
		return BusinessPlan{}, err
	}
	if r.Version != 0 && r.Version != cur.Version {
		return BusinessPlan{}, newErr(problem.CodeBookingChanged, "Booking %s changed since this page was shown (someone else acted on it). Reload it to see its current state; nothing was changed.", cur.Reference).Wrap(store.ErrConflict)
	}
	next, err := transition(cur, r.Action, r.Reason, s.now())
	if err != nil {
		return BusinessPlan{}, err
	}
	sv, st := e.svcByID[cur.ServiceID], e.stByID[cur.StaffID]
	if sv == nil || st == nil {
		return BusinessPlan{}, fmt.Errorf("booking %s does not match its catalog", cur.Reference)
	}
	p := BusinessPlan{Request: r, Current: cur, Next: next, entry: e}
	p.Facts = e.facts(r.Action, sv, st, cur.StartsAt, cur.EndsAt)
	p.Facts.PriceCents, p.Facts.Currency = cur.PriceCents, cur.Currency
	p.Facts.BookingReference, p.Facts.BookingVersion, p.Facts.Reason = cur.Reference, cur.Version, r.Reason
	p.Facts.Notes = cur.Notes
	return p, nil
}

// ApplyBusiness executes a plan through tx: the transition is checked again
// on the locked row (a booking changed since the plan answers
// booking_changed and changes nothing), the booking written with its
// version bumped, and a history event recorded.
func (s *Service) ApplyBusiness(ctx context.Context, tx Tx, p BusinessPlan) (store.Booking, error) {
	if p.entry == nil {
		return store.Booking{}, errors.New("booking: ApplyBusiness needs a plan from PlanBusiness")
	}
	now := s.now()
	out, err := tx.UpdateBooking(ctx, p.Current.ID, func(cur store.Booking) (store.Booking, error) {
		if cur.Version != p.Current.Version || cur.Status != p.Current.Status {
			return cur, newErr(problem.CodeBookingChanged, "Booking %s changed since this page was shown (someone else acted on it). Reload it to see its current state; nothing was changed.", cur.Reference).Wrap(store.ErrConflict)
		}
		return transition(cur, p.Request.Action, p.Request.Reason, now)
	})
	switch {
	case ErrorCode(err) != "":
		return store.Booking{}, err
	case err != nil:
		return store.Booking{}, fmt.Errorf("update booking: %w", err)
	}
	if err := tx.AddBookingEvent(ctx, store.BookingEvent{BookingID: out.ID, Version: out.Version, Action: out.Status,
		StaffID: out.StaffID, StartsAt: out.StartsAt, EndsAt: out.EndsAt, At: now}); err != nil {
		return store.Booking{}, fmt.Errorf("booking event: %w", err)
	}
	return out, nil
}

// DuePending lists up to limit pending bookings whose respond-by instant
// has come, for the job that declines them.
func (s *Service) DuePending(ctx context.Context, limit int) ([]store.Booking, error) {
	return s.store.ListDuePending(ctx, s.now(), limit)
}

// BusinessBookingQuery selects bookings of a business for its console.
type BusinessBookingQuery struct {
	Actor    BusinessActor
	StaffRef string   // optional: one staff member's (an owner's filter)
	Statuses []string // optional: only these statuses
	From, To time.Time
	Limit    int // 1..200; 0 means 50
	Offset   int
}

// BusinessBookingPage is one page of a business's bookings.
type BusinessBookingPage struct {
	Results    []BookingView `json:"results"`
	HasMore    bool          `json:"has_more"`
	NextOffset *int          `json:"next_offset"`
}

// BusinessBookings lists the bookings of the actor's business (a staff
// actor: their own) that start in [From, To), earliest first. An unknown
// staff reference or status answers invalid_argument.
func (s *Service) BusinessBookings(ctx context.Context, q BusinessBookingQuery) (BusinessBookingPage, error) {
	if q.Actor.BusinessID == "" {
		return BusinessBookingPage{}, errors.New("booking: BusinessBookings without a business")
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Limit < 1 || q.Limit > 200 || q.Offset < 0 {
		return BusinessBookingPage{}, fieldErr(problem.CodeInvalidArgument, "limit", "limit must be 1 to 200 and offset at least 0.")
	}
	if q.From.IsZero() || q.To.IsZero() || !q.From.Before(q.To) {
		return BusinessBookingPage{}, fieldErr(problem.CodeInvalidArgument, "from", "Choose a date range whose start is before its end.")
	}
	for _, st := range q.Statuses {
		if !validStatus(st) {
			return BusinessBookingPage{}, fieldErr(problem.CodeInvalidArgument, "status", "Unknown status %q: use pending, confirmed, declined, cancelled, completed or no_show.", st)
		}
	}
	e, err := s.entryByID(ctx, q.Actor.BusinessID)
	if err != nil {
		return BusinessBookingPage{}, err
	}
	staffID := q.Actor.StaffID
	if ref := strings.TrimSpace(q.StaffRef); ref != "" {
		st := e.stByRef[ref]
		if st == nil || staffID != "" && st.ID != staffID {
			return BusinessBookingPage{}, fieldErr(problem.CodeUnknownStaff, "staff_reference", "No staff member of this business has the reference %q.", ref)
		}
		staffID = st.ID
	}
	rows, err := s.store.ListBusinessBookings(ctx, store.BusinessBookingFilter{BusinessID: q.Actor.BusinessID, StaffID: staffID,
		Statuses: q.Statuses, From: q.From, To: q.To, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return BusinessBookingPage{}, fmt.Errorf("list bookings: %w", err)
	}
	p := BusinessBookingPage{Results: []BookingView{}}
	p.HasMore, p.NextOffset = nextOffset(len(rows), q.Limit, q.Offset)
	for i, b := range rows {
		if i == q.Limit {
			break
		}
		p.Results = append(p.Results, e.view(b))
	}
	return p, nil
}

func validStatus(s string) bool {
	switch s {
	case store.BookingPending, store.BookingConfirmed, store.BookingDeclined, store.BookingCancelled,
		store.BookingCompleted, store.BookingNoShow:
		return true
	}
	return false
}

// BusinessBookingDetail is one booking as its business sees it: the
// booking, who booked it and how.
type BusinessBookingDetail struct {
	Booking       BookingView `json:"booking"`
	CustomerName  string      `json:"customer_name"`
	CustomerEmail string      `json:"customer_email"`
	// BookedVia is "web" (the person on the My bookings page) or "app";
	// AppName names the app of the link it was booked through.
	BookedVia string `json:"booked_via"`
	AppName   string `json:"app_name,omitempty"`
}

// DetailReader is what BusinessBooking reads beyond the engine's store:
// the person, and the link and app the booking came through.
type DetailReader interface {
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetLink(ctx context.Context, id string) (store.Link, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
}

// BusinessBooking returns one booking of the actor's business (a staff
// actor: their own); any other answers booking_not_found.
func (s *Service) BusinessBooking(ctx context.Context, r DetailReader, a BusinessActor, ref string) (BusinessBookingDetail, error) {
	b, e, err := s.businessBooking(ctx, a, ref)
	if err != nil {
		return BusinessBookingDetail{}, err
	}
	d := BusinessBookingDetail{Booking: e.view(b), BookedVia: "web"}
	if b.AccountID != "" {
		acct, err := r.GetAccount(ctx, b.AccountID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return BusinessBookingDetail{}, fmt.Errorf("booking account: %w", err)
		}
		d.CustomerName, d.CustomerEmail = store.CustomerOf(acct)
	}
	if b.LinkID != "" {
		d.BookedVia = "app"
		if l, err := r.GetLink(ctx, b.LinkID); err == nil {
			if c, err := r.GetClient(ctx, l.ClientID); err == nil {
				d.AppName = c.Name
			}
		}
	}
	return d, nil
}

// Credential is one self-reported credential as check_business_availability
// shows it.
type Credential struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Issuer     string `json:"issuer,omitempty"`
	Number     string `json:"number,omitempty"`
	ValidUntil string `json:"valid_until,omitempty"`
}

// CredentialsNote frames a business's credentials in every answer.
const CredentialsNote = "Reported by the business; Linkslot has not verified them."

// SelfReportedCredentials are a business's licenses, insurance and
// certifications, framed as its own statement, with when it last changed
// them.
type SelfReportedCredentials struct {
	Note      string       `json:"note"`
	UpdatedAt time.Time    `json:"updated_at"`
	Items     []Credential `json:"items"`
}

func credentialsView(cs []store.Credential) *SelfReportedCredentials {
	if len(cs) == 0 {
		return nil
	}
	v := &SelfReportedCredentials{Note: CredentialsNote, Items: make([]Credential, len(cs))}
	for i, c := range cs {
		v.Items[i] = Credential{Kind: c.Kind, Name: c.Name, Issuer: c.Issuer, Number: c.Number, ValidUntil: c.ValidUntil}
		if c.UpdatedAt.After(v.UpdatedAt) {
			v.UpdatedAt = c.UpdatedAt
		}
	}
	return v
}
