package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// ReferencePrefix starts every booking reference.
const ReferencePrefix = "LS-"

// NewReference returns a short, unguessable booking reference: "LS-" and 10
// characters of an unambiguous alphabet (50 random bits).
func NewReference() string {
	return ReferencePrefix + strings.ToUpper(store.RandomString(7)[:10])
}

// NormalizeReference trims and upper-cases a booking reference as typed by
// an agent, so "ls-abcd…" finds "LS-ABCD…".
func NormalizeReference(ref string) string {
	return strings.ToUpper(strings.TrimSpace(ref))
}

// CheckText is the one rule for a booking's free text (notes, a
// cancellation reason): internal/textcheck's rule for multi-line text of at
// most MaxNotes characters (docs/reference.md §4). It returns the text in
// NFC, as it is stored, or invalid_argument naming field. The plans do not
// check it again: the mutation service checks the text first, before
// anything else (internal/mutation), and is the engine's one caller for
// changes.
func CheckText(field, v string) (string, error) {
	s, err := textcheck.Text(v, MaxNotes, true)
	if err != nil {
		return "", fieldErr(problem.CodeInvalidArgument, field, "%s %v; correct it and call again.", field, err)
	}
	return s, nil
}

// movable refuses to move a booking that is cancelled, started, completed or
// carries an active payment.
func movable(b store.Booking, now time.Time) *Error {
	switch {
	case b.Status == store.BookingCancelled:
		return newErr(problem.CodeAlreadyCancelled, "Booking %s is cancelled and cannot be moved. Create a new booking with create_my_booking instead.", b.Reference)
	case b.Status == store.BookingDeclined:
		return newErr(problem.CodeAlreadyCancelled, "Booking %s was declined by the business and cannot be moved. Create a new booking with create_my_booking instead.", b.Reference)
	case !store.HoldsSlot(b.Status) || !b.StartsAt.After(now):
		return newErr(problem.CodeInThePast, "Booking %s has already started or taken place and cannot be moved. Create a new booking with create_my_booking instead.", b.Reference)
	case b.PaymentState != "" && b.PaymentState != store.PaymentNone:
		return newErr(problem.CodePaymentActive, "Booking %s has an active payment or deposit hold, so it can only be changed with the business directly.", b.Reference)
	}
	return nil
}

// facts fills the catalog part of a summary.
func (e *catalogEntry) facts(action string, sv *store.Service, st *store.Staff, start, end time.Time) Facts {
	b := e.cat.Business
	return Facts{Action: action, BusinessReference: b.Reference, BusinessName: b.Name, BusinessAddress: b.Address,
		ServiceReference: sv.Reference, ServiceName: sv.Name, StaffReference: st.Reference, StaffName: st.Name,
		TimeZone: b.TimeZone, StartsAt: start.In(e.loc), EndsAt: end.In(e.loc), PriceCents: sv.PriceCents, Currency: sv.Currency,
		CancellationPolicy: b.CancellationPolicy, CancellationWindowMinutes: b.CancellationWindowMinutes,
		CancellationFeeCents: b.CancellationFeeCents}
}

// bookingSpan returns the booking times of sv starting at start.
func bookingSpan(sv *store.Service, start time.Time) (end, blockStart, blockEnd time.Time) {
	start = store.UTC(start)
	end = start.Add(time.Duration(sv.DurationMinutes) * time.Minute)
	return end, start.Add(-time.Duration(max(sv.BufferBeforeMinutes, 0)) * time.Minute),
		end.Add(time.Duration(max(sv.BufferAfterMinutes, 0)) * time.Minute)
}

// PlanCreate validates a create and computes its summary; it writes nothing.
// Checks run in this order: arguments, business, service, deposit, staff,
// time rules, slot. The notes are the caller's to check (CheckText).
func (s *Service) PlanCreate(ctx context.Context, r CreateRequest) (CreatePlan, error) {
	if r.AccountID == "" {
		return CreatePlan{}, errors.New("booking: PlanCreate without an account")
	}
	if r.StartsAt.IsZero() {
		return CreatePlan{}, fieldErr(problem.CodeInvalidTime, "starts_at", "starts_at must be an exact RFC 3339 instant with its offset, taken from check_business_availability.")
	}
	e, err := s.entryByRef(ctx, r.BusinessRef)
	if err != nil {
		return CreatePlan{}, err
	}
	if err := e.bookable(); err != nil {
		return CreatePlan{}, err
	}
	sv, err := e.service(r.ServiceRef)
	if err != nil {
		return CreatePlan{}, err
	}
	if sv.DepositRequired {
		b := e.cat.Business
		de := newErr(problem.CodeDepositRequired, "%s at %s requires a deposit, which cannot be paid here. Nothing was booked; the person can finish the booking on the business's own page%s.", sv.Name, b.Name, urlHint(b.BookingURL))
		de.BookingURL = b.BookingURL
		return CreatePlan{}, de
	}
	sts, err := e.staffFor(sv, r.StaffRef, "staff_reference")
	if err != nil {
		return CreatePlan{}, err
	}
	start := store.UTC(r.StartsAt)
	now := s.now()
	rl := e.rulesAt(now)
	if err := rl.check(start); err != nil {
		err.Field = "starts_at"
		return CreatePlan{}, err
	}
	from, to := e.dayBounds(dateOf(start.In(e.loc)), sv)
	bks, err := s.store.ListStaffBookings(ctx, staffIDs(sts), from, to)
	if err != nil {
		return CreatePlan{}, fmt.Errorf("list bookings: %w", err)
	}
	// A slot held for the person by a waitlist offer blocks everyone but
	// them: the offer's own span is ignored for its holder.
	var offer *store.WaitlistOffer
	ignore := ""
	if r.OfferRef != "" {
		o, err := s.offerFor(ctx, r, e, sv, now)
		if err != nil {
			return CreatePlan{}, err
		}
		offer, ignore = &o, o.ID
	}
	var st *store.Staff
	var verr error = errSlotTaken(nil)
	for _, cand := range sts { // sts is in reference order
		if err := e.validate(cand, sv, start, bks, ignore, now); err == nil {
			st, verr = cand, nil
			break
		} else {
			verr = err
		}
	}
	if verr != nil {
		return CreatePlan{}, verr
	}
	end, bs, be := bookingSpan(sv, start)
	status := store.BookingConfirmed
	var respondBy *time.Time
	if sv.RequiresConfirmation {
		// The business answers within its window, never past the start
		// (docs/reference.md "Bookings the business answers").
		t := now.Add(e.cat.Business.ConfirmationWindow())
		if t.After(start) {
			t = start
		}
		status, respondBy = store.BookingPending, &t
	}
	p := CreatePlan{Request: r, entry: e, Offer: offer,
		Booking: store.Booking{BusinessID: e.cat.Business.ID, ServiceID: sv.ID, StaffID: st.ID, AccountID: r.AccountID,
			LinkID: r.LinkID, StartsAt: start, EndsAt: end, BlockStart: bs, BlockEnd: be, Status: status,
			Version: 1, Notes: r.Notes, PaymentState: store.PaymentNone, PriceCents: sv.PriceCents, Currency: sv.Currency,
			RespondBy: respondBy}}
	p.Facts = e.facts("create", sv, st, start, end)
	p.Facts.Notes, p.Facts.PrivacyNotice = r.Notes, e.cat.Business.PrivacyNotice
	if sv.RequiresConfirmation {
		p.Facts.RequiresConfirmation, p.Facts.ConfirmationWindow = true, e.cat.Business.ConfirmationWindow()
	}
	return p, nil
}

// staffBookings reads the bookings the slot engine checks against.
type staffBookings interface {
	ListStaffBookings(ctx context.Context, staffIDs []string, from, to time.Time) ([]store.Booking, error)
}

// Tx is what Create, Reschedule and Cancel read and write through: a store
// bound to the caller's transaction (or the plain store), so that the
// booking commits with the caller's own records.
type Tx interface {
	staffBookings
	InsertBooking(ctx context.Context, b store.Booking) error
	UpdateBooking(ctx context.Context, id string, fn func(store.Booking) (store.Booking, error)) (store.Booking, error)
	AddBookingEvent(ctx context.Context, e store.BookingEvent) error
	UseWaitlistOffer(ctx context.Context, id, bookingID string, now time.Time) (store.WaitlistOffer, error)
}

var _ Tx = store.Store(nil)

// recheck runs the slot engine again through tx (the caller's transaction,
// or the engine's store for a plan).
func (s *Service) recheck(ctx context.Context, tx staffBookings, e *catalogEntry, b store.Booking, ignore string) error {
	sv, st := e.svcByID[b.ServiceID], e.stByID[b.StaffID]
	if sv == nil || st == nil {
		return errors.New("booking: plan does not match its catalog")
	}
	from, to := e.dayBounds(dateOf(b.StartsAt.In(e.loc)), sv)
	bks, err := tx.ListStaffBookings(ctx, []string{st.ID}, from, to)
	if err != nil {
		return fmt.Errorf("list bookings: %w", err)
	}
	if verr := e.validate(st, sv, b.StartsAt, bks, ignore, s.now()); verr != nil {
		return verr
	}
	return nil
}

// Create executes a plan through tx (a store bound to the caller's
// transaction, or the plain store). It re-checks the slot with the same
// engine and inserts the booking with a fresh reference and version 1; a
// lost race answers slot_taken.
func (s *Service) Create(ctx context.Context, tx Tx, p CreatePlan) (store.Booking, error) {
	if p.entry == nil {
		return store.Booking{}, errors.New("booking: Create needs a plan from PlanCreate")
	}
	b := p.Booking
	ignore := ""
	if p.Offer != nil {
		ignore = p.Offer.ID
	}
	if err := s.recheck(ctx, tx, p.entry, b, ignore); err != nil {
		return store.Booking{}, err
	}
	now := s.now()
	b.CreatedAt, b.UpdatedAt = now, now
	if b.RespondBy != nil {
		t := now.Add(p.entry.cat.Business.ConfirmationWindow())
		if t.After(b.StartsAt) {
			t = b.StartsAt
		}
		b.RespondBy = &t
	}
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		b.ID, b.Reference = store.NewID("bkg"), NewReference()
		if err = tx.InsertBooking(ctx, b); !errors.Is(err, store.ErrAlreadyExists) {
			break
		}
	}
	switch {
	case errors.Is(err, store.ErrOverlap):
		return store.Booking{}, errSlotTaken(err)
	case err != nil:
		return store.Booking{}, fmt.Errorf("insert booking: %w", err)
	}
	if p.Offer != nil {
		// The offer is used in the booking's transaction: of two uses, or a
		// use and its lapse, exactly one commits.
		if _, err := tx.UseWaitlistOffer(ctx, p.Offer.ID, b.ID, now); errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return store.Booking{}, fieldErr(problem.CodeOfferLapsed, "offer_reference", "Offer %s is no longer held (it ran out, or was used or passed on). Call check_business_availability for open times.", p.Offer.Reference)
		} else if err != nil {
			return store.Booking{}, fmt.Errorf("use offer: %w", err)
		}
	}
	if err := tx.AddBookingEvent(ctx, store.BookingEvent{BookingID: b.ID, Version: 1, Action: "created",
		StaffID: b.StaffID, StartsAt: b.StartsAt, EndsAt: b.EndsAt, At: now}); err != nil {
		return store.Booking{}, fmt.Errorf("booking event: %w", err)
	}
	return b, nil
}

// PlanReschedule validates a move and computes its summary; it writes
// nothing. The service and its duration never change; the staff member
// changes only when StaffRef names another one.
func (s *Service) PlanReschedule(ctx context.Context, r RescheduleRequest) (ReschedulePlan, error) {
	cur, e, err := s.ownBooking(ctx, r.AccountID, r.BookingRef)
	if err != nil {
		return ReschedulePlan{}, err
	}
	now := s.now()
	if err := movable(cur, now); err != nil {
		return ReschedulePlan{}, err
	}
	if r.NewStartsAt.IsZero() {
		return ReschedulePlan{}, fieldErr(problem.CodeInvalidTime, "requested_starts_at", "requested_starts_at must be an exact RFC 3339 instant with its offset, taken from check_my_booking_availability.")
	}
	if err := e.bookable(); err != nil {
		return ReschedulePlan{}, err
	}
	sv := e.svcByID[cur.ServiceID]
	oldSt := e.stByID[cur.StaffID]
	if sv == nil || oldSt == nil {
		return ReschedulePlan{}, fmt.Errorf("booking %s does not match its catalog", cur.Reference)
	}
	st := oldSt
	if strings.TrimSpace(r.StaffRef) != "" {
		if st, err = e.staff(r.StaffRef, "with_staff_reference", sv); err != nil {
			return ReschedulePlan{}, err
		}
	}
	start := store.UTC(r.NewStartsAt)
	end, bs, be := bookingSpan(sv, start)
	next := cur
	next.StaffID, next.StartsAt, next.EndsAt, next.BlockStart, next.BlockEnd = st.ID, start, end, bs, be
	next.Version = cur.Version + 1
	if err := s.recheck(ctx, s.store, e, next, cur.ID); err != nil {
		if be, ok := AsError(err); ok && be.Field == "starts_at" {
			be.Field = "requested_starts_at"
		}
		return ReschedulePlan{}, err
	}
	p := ReschedulePlan{Request: r, Current: cur, Next: next, entry: e}
	p.Facts = e.facts("reschedule", sv, st, start, end)
	p.Facts.BookingReference, p.Facts.BookingVersion = cur.Reference, cur.Version
	p.Facts.PreviousStaffName = oldSt.Name
	p.Facts.PreviousStartsAt, p.Facts.PreviousEndsAt = cur.StartsAt.In(e.loc), cur.EndsAt.In(e.loc)
	return p, nil
}

func errChanged(ref string) *Error {
	return newErr(problem.CodeBookingChanged, "Booking %s changed since this request was prepared. Call get_my_booking for its current state and grant, then try again.", ref).Wrap(store.ErrConflict)
}

// Reschedule moves the booking in place (same reference, version+1) and
// records a history event keeping the previous time. A booking changed since
// the plan answers booking_changed; a lost race for the slot, slot_taken.
func (s *Service) Reschedule(ctx context.Context, tx Tx, p ReschedulePlan) (store.Booking, error) {
	if p.entry == nil {
		return store.Booking{}, errors.New("booking: Reschedule needs a plan from PlanReschedule")
	}
	if err := s.recheck(ctx, tx, p.entry, p.Next, p.Current.ID); err != nil {
		return store.Booking{}, err
	}
	now := s.now()
	var prev store.Booking
	out, err := tx.UpdateBooking(ctx, p.Current.ID, func(cur store.Booking) (store.Booking, error) {
		if cur.Version != p.Current.Version || cur.AccountID != p.Current.AccountID {
			return cur, errChanged(cur.Reference)
		}
		if err := movable(cur, now); err != nil {
			return cur, err
		}
		prev = cur
		n := cur
		n.StaffID, n.StartsAt, n.EndsAt, n.BlockStart, n.BlockEnd = p.Next.StaffID, p.Next.StartsAt, p.Next.EndsAt, p.Next.BlockStart, p.Next.BlockEnd
		if n.RespondBy != nil && n.RespondBy.After(n.StartsAt) {
			// A pending booking moved earlier is answered before its new start.
			t := n.StartsAt
			n.RespondBy = &t
		}
		n.Version, n.UpdatedAt = cur.Version+1, now
		return n, nil
	})
	switch {
	case errors.Is(err, store.ErrOverlap):
		return store.Booking{}, errSlotTaken(err)
	case ErrorCode(err) != "":
		return store.Booking{}, err
	case err != nil:
		return store.Booking{}, fmt.Errorf("update booking: %w", err)
	}
	if err := tx.AddBookingEvent(ctx, store.BookingEvent{BookingID: out.ID, Version: out.Version, Action: "rescheduled",
		StaffID: prev.StaffID, StartsAt: prev.StartsAt, EndsAt: prev.EndsAt, At: now}); err != nil {
		return store.Booking{}, fmt.Errorf("booking event: %w", err)
	}
	return out, nil
}

// cancelFee is the business's fee when now is inside the cancellation window
// before start, else 0.
func (e *catalogEntry) cancelFee(start, now time.Time) int64 {
	b := e.cat.Business
	if b.CancellationFeeCents <= 0 || b.CancellationWindowMinutes <= 0 {
		return 0
	}
	if now.After(start.Add(-time.Duration(b.CancellationWindowMinutes) * time.Minute)) {
		return b.CancellationFeeCents
	}
	return 0
}

// PlanCancel validates a cancellation and computes its fee; it writes
// nothing. An already cancelled booking is not an error: the plan says
// AlreadyCancelled. A booking that has started or is completed answers
// cancellation_closed; one with an active payment, payment_active.
func (s *Service) PlanCancel(ctx context.Context, r CancelRequest) (CancelPlan, error) {
	cur, e, err := s.ownBooking(ctx, r.AccountID, r.BookingRef)
	if err != nil {
		return CancelPlan{}, err
	}
	now := s.now()
	sv, st := e.svcByID[cur.ServiceID], e.stByID[cur.StaffID]
	if sv == nil || st == nil {
		return CancelPlan{}, fmt.Errorf("booking %s does not match its catalog", cur.Reference)
	}
	p := CancelPlan{Request: r, Current: cur, entry: e}
	p.Facts = e.facts("cancel", sv, st, cur.StartsAt, cur.EndsAt)
	p.Facts.PriceCents, p.Facts.Currency = cur.PriceCents, cur.Currency
	p.Facts.BookingReference, p.Facts.BookingVersion, p.Facts.Reason = cur.Reference, cur.Version, r.Reason
	switch {
	case cur.Status == store.BookingCancelled:
		p.AlreadyCancelled = true
		p.FeeCents = cur.CancellationFeeCents
		p.Facts.FeeNow = 0
		return p, nil
	case cur.Status == store.BookingDeclined:
		return CancelPlan{}, newErr(problem.CodeAlreadyCancelled, "Booking %s was declined by %s, so there is nothing to cancel.", cur.Reference, e.cat.Business.Name)
	case !store.HoldsSlot(cur.Status) || !cur.StartsAt.After(now):
		return CancelPlan{}, newErr(problem.CodeCancellationClosed, "Booking %s has already started or taken place, so it can no longer be cancelled here. The person can contact %s directly.", cur.Reference, e.cat.Business.Name)
	case cur.PaymentState != "" && cur.PaymentState != store.PaymentNone:
		return CancelPlan{}, newErr(problem.CodePaymentActive, "Booking %s has an active payment or deposit hold, so it can only be cancelled with %s directly.", cur.Reference, e.cat.Business.Name)
	}
	if cur.Status == store.BookingConfirmed { // a request the business has not accepted costs nothing
		p.FeeCents = e.cancelFee(cur.StartsAt, now)
	}
	p.Facts.FeeNow = p.FeeCents
	return p, nil
}

// Cancel cancels the booking (version+1) with the plan's fee and records a
// history event. A plan with AlreadyCancelled returns the booking unchanged;
// a booking cancelled concurrently answers already_cancelled; one changed
// otherwise, booking_changed.
func (s *Service) Cancel(ctx context.Context, tx Tx, p CancelPlan) (store.Booking, error) {
	if p.entry == nil {
		return store.Booking{}, errors.New("booking: Cancel needs a plan from PlanCancel")
	}
	if p.AlreadyCancelled {
		return p.Current, nil
	}
	now := s.now()
	out, err := tx.UpdateBooking(ctx, p.Current.ID, func(cur store.Booking) (store.Booking, error) {
		if cur.Status == store.BookingCancelled {
			return cur, newErr(problem.CodeAlreadyCancelled, "Booking %s is already cancelled; nothing more to do.", cur.Reference)
		}
		if cur.Version != p.Current.Version || cur.AccountID != p.Current.AccountID {
			return cur, errChanged(cur.Reference)
		}
		if !store.HoldsSlot(cur.Status) || !cur.StartsAt.After(now) {
			return cur, newErr(problem.CodeCancellationClosed, "Booking %s has already started or taken place, so it can no longer be cancelled here.", cur.Reference)
		}
		n := cur
		n.Status, n.CancelReason, n.CancellationFeeCents, n.RespondBy = store.BookingCancelled, p.Request.Reason, p.FeeCents, nil
		n.Version, n.UpdatedAt, n.CancelledAt = cur.Version+1, now, &now
		return n, nil
	})
	switch {
	case ErrorCode(err) != "":
		return store.Booking{}, err
	case err != nil:
		return store.Booking{}, fmt.Errorf("cancel booking: %w", err)
	}
	if err := tx.AddBookingEvent(ctx, store.BookingEvent{BookingID: out.ID, Version: out.Version, Action: "cancelled",
		StaffID: out.StaffID, StartsAt: out.StartsAt, EndsAt: out.EndsAt, At: now}); err != nil {
		return store.Booking{}, fmt.Errorf("booking event: %w", err)
	}
	return out, nil
}
