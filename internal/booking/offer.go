package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// FreedTx is what SlotFreed reads and writes inside the transaction that
// freed the slot, so that the offer exists exactly when the freeing does.
type FreedTx interface {
	ListWaitingEntries(ctx context.Context, businessID string) ([]store.WaitlistEntry, error)
	WasOffered(ctx context.Context, entryID, staffID string, start time.Time) (bool, error)
	HoldSlot(ctx context.Context, o store.WaitlistOffer) error
}

// Offered is a freed slot offered to a waiting person: what the person's
// e-mail and the business's waitlist.offered webhook tell.
type Offered struct {
	Offer store.WaitlistOffer
	Entry store.WaitlistEntry
	// Facts describe the held slot as a booking's would (action "offer").
	Facts Facts
	// Business is the business row.
	Business store.Business
}

// SlotFreed is the waitlist's one entry point: call it inside the
// transaction that frees a booking's slot (a cancellation, a move, a
// decline), with the booking as it was, or with a lapsed offer's slot
// (OfferSpan). The candidate start is freed.StartsAt. It
// offers the slot to the first waiting person whose entry it matches — the
// service fits in the freed span with its buffers, the staff member is the
// one asked for (or anyone) and performs it, the local date and time of day
// are inside the entry's window, the start is inside the business's notice
// and horizon, and the entry was never offered this slot — and holds it
// for them (store.Waitlist HoldSlot) for the offer time. It answers nil
// when nobody is offered the slot: nobody matches, or the slot is taken
// or held already (decided in the database under the staff member's
// lock, so two replicas never offer one slot twice).
func (s *Service) SlotFreed(ctx context.Context, tx FreedTx, freed store.Booking) (*Offered, error) {
	e, err := s.entryByID(ctx, freed.BusinessID)
	if err != nil {
		return nil, err
	}
	if e.bookable() != nil {
		return nil, nil
	}
	st := e.stByID[freed.StaffID]
	if st == nil {
		return nil, nil
	}
	entries, err := tx.ListWaitingEntries(ctx, freed.BusinessID)
	if err != nil {
		return nil, fmt.Errorf("waiting entries: %w", err)
	}
	now := s.now()
	rl := e.rulesAt(now)
	start := store.UTC(freed.StartsAt)
	if rl.check(start) != nil {
		return nil, nil
	}
	for _, w := range entries {
		sv := e.svcByID[w.ServiceID]
		if sv == nil || (w.StaffID != "" && w.StaffID != st.ID) || !e.performs(st, sv.ID) {
			continue
		}
		end, bs, be := bookingSpan(sv, start)
		if bs.Before(freed.BlockStart) || be.After(freed.BlockEnd) {
			continue
		}
		if !e.inWindow(w, start, end) {
			continue
		}
		seen, err := tx.WasOffered(ctx, w.ID, st.ID, start)
		if err != nil {
			return nil, fmt.Errorf("offered before: %w", err)
		}
		if seen {
			continue
		}
		o := store.WaitlistOffer{ID: store.NewID("wlo"), Reference: "OF-" + NewReference(), EntryID: w.ID,
			AccountID: w.AccountID, LinkID: w.LinkID, BusinessID: w.BusinessID, ServiceID: sv.ID, StaffID: st.ID,
			StartsAt: start, EndsAt: end, BlockStart: bs, BlockEnd: be, HeldUntil: now.Add(s.offerHold()),
			Status: store.OfferHeld, CreatedAt: now, UpdatedAt: now}
		switch err := tx.HoldSlot(ctx, o); {
		case errors.Is(err, store.ErrOverlap):
			return nil, nil // taken or held meanwhile: nothing to offer
		case errors.Is(err, store.ErrConflict):
			continue // the entry changed (left, offered elsewhere)
		case err != nil:
			return nil, fmt.Errorf("hold slot: %w", err)
		}
		w.Status = store.WaitlistOffered
		f := e.facts("offer", sv, st, start, end)
		return &Offered{Offer: o, Entry: w, Facts: f, Business: e.cat.Business}, nil
	}
	return nil, nil
}

// SpanTx is what SpanFreed reads and writes in its transaction: the
// waiting entries and offers (FreedTx) and the staff member's bookings and
// held offers around the span.
type SpanTx interface {
	FreedTx
	staffBookings
}

// SpanFreed offers time that a change freed of one staff member, [from,
// to) — time off removed in the console, a connected calendar's event
// deleted — to the people waiting (docs/design.md "The waitlist"). A span
// is not one booking's slot: for each waiting entry in join order that the
// staff member can serve (the one asked for, or anyone, performing the
// service), it tries the slot engine's open starts of that service whose
// appointment overlaps the span, day by day inside the entry's dates and
// time of day, and holds for the entry the first one it was never offered
// that the database lets it hold (HoldSlot: no booking and no other live
// offer overlaps it, under the staff member's lock). The slot engine's
// rules apply as for a booking: hours, time off, other bookings and held
// offers, notice and horizon. Each entry is offered at most one slot, and
// a slot offered to one is busy for the next, so one span can make as many
// offers as it has room for.
//
// The catalog is the engine's current one, read outside tx: call SpanFreed
// after the freeing change commits (its catalog version moved), in a
// transaction of its own.
func (s *Service) SpanFreed(ctx context.Context, tx SpanTx, businessID, staffID string, from, to time.Time) ([]Offered, error) {
	from, to = store.UTC(from), store.UTC(to)
	if !from.Before(to) {
		return nil, nil
	}
	e, err := s.entryByID(ctx, businessID)
	if err != nil {
		return nil, err
	}
	if e.cat.Business.ID != businessID || e.bookable() != nil {
		return nil, nil
	}
	st := e.stByID[staffID]
	if st == nil {
		return nil, nil
	}
	now := s.now()
	rl := e.rulesAt(now)
	// The days whose slots can overlap the span, cut to those a booking
	// can be made on now.
	lo, hi := from, to
	if lo.Before(rl.earliest) {
		lo = rl.earliest
	}
	if hi.After(rl.latest.Add(24 * time.Hour)) {
		hi = rl.latest.Add(24 * time.Hour)
	}
	if !lo.Before(hi) {
		return nil, nil
	}
	first, last := dateOf(lo.In(e.loc)), dateOf(hi.In(e.loc))
	entries, err := tx.ListWaitingEntries(ctx, businessID)
	if err != nil {
		return nil, fmt.Errorf("waiting entries: %w", err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	// Every booking and held offer that can block a slot of those days,
	// whatever the service's length and buffers (a day each side).
	dayFrom, _ := resolveLocal(e.loc, first, 0)
	dayTo, _ := resolveLocal(e.loc, last.next(), 0)
	busy := spanBusy{read: func() ([]store.Booking, error) {
		return tx.ListStaffBookings(ctx, []string{st.ID}, dayFrom.Add(-24*time.Hour), dayTo.Add(24*time.Hour))
	}}
	if err := busy.refresh(); err != nil {
		return nil, err
	}
	var out []Offered
	for _, w := range entries {
		sv := e.svcByID[w.ServiceID]
		if sv == nil || (w.StaffID != "" && w.StaffID != st.ID) || !e.performs(st, sv.ID) {
			continue
		}
		o, err := s.offerInSpan(ctx, tx, e, st, sv, w, first, last, from, to, &busy, rl)
		if err != nil {
			return nil, err
		}
		if o == nil {
			continue
		}
		out = append(out, *o)
		busy.list = append(busy.list, store.Booking{ID: o.Offer.ID, StaffID: st.ID, Status: store.BookingConfirmed,
			BlockStart: o.Offer.BlockStart, BlockEnd: o.Offer.BlockEnd})
	}
	return out, nil
}

// maxSpanRereads bounds how often SpanFreed reads the staff member's
// bookings again after HoldSlot found a start taken since the last read;
// past it, the remaining starts are tried one by one.
const maxSpanRereads = 3

// spanBusy is the staff member's bookings and held offers as SpanFreed
// last read them, with the offers it made since.
type spanBusy struct {
	list    []store.Booking
	rereads int
	read    func() ([]store.Booking, error)
}

func (b *spanBusy) refresh() error {
	l, err := b.read()
	if err != nil {
		return fmt.Errorf("list bookings: %w", err)
	}
	b.list = l
	return nil
}

// offerInSpan holds for w the first open start of sv with st on the days
// first..last whose appointment overlaps [from, to) and fits w's window
// (SpanFreed); nil when there is none.
// A start taken since busy was read (another replica's offer, a booking)
// makes it read busy again, up to maxSpanRereads times, and list the day
// anew rather than try each start after it.
func (s *Service) offerInSpan(ctx context.Context, tx SpanTx, e *catalogEntry, st *store.Staff, sv *store.Service, w store.WaitlistEntry,
	first, last date, from, to time.Time, busy *spanBusy, rl rules) (*Offered, error) {
	for d := first; d.String() <= last.String(); d = d.next() {
		day := d.String()
		if day < w.FromDate || day > w.ToDate {
			continue
		}
	again:
		for _, sl := range e.slots(st, sv, d, blocksOf(busy.list), "", &rl) {
			start := store.UTC(sl.StartsAt)
			end, bs, be := bookingSpan(sv, start)
			if !start.Before(to) || !from.Before(end) {
				continue
			}
			if !e.inWindow(w, start, end) {
				continue
			}
			seen, err := tx.WasOffered(ctx, w.ID, st.ID, start)
			if err != nil {
				return nil, fmt.Errorf("offered before: %w", err)
			}
			if seen {
				continue
			}
			now := rl.now
			o := store.WaitlistOffer{ID: store.NewID("wlo"), Reference: "OF-" + NewReference(), EntryID: w.ID,
				AccountID: w.AccountID, LinkID: w.LinkID, BusinessID: w.BusinessID, ServiceID: sv.ID, StaffID: st.ID,
				StartsAt: start, EndsAt: end, BlockStart: bs, BlockEnd: be, HeldUntil: now.Add(s.offerHold()),
				Status: store.OfferHeld, CreatedAt: now, UpdatedAt: now}
			switch err := tx.HoldSlot(ctx, o); {
			case errors.Is(err, store.ErrOverlap):
				// Booked or held since the read: read again and list the
				// day anew, or try the next start.
				if busy.rereads < maxSpanRereads {
					busy.rereads++
					if err := busy.refresh(); err != nil {
						return nil, err
					}
					goto again
				}
				continue
			case errors.Is(err, store.ErrConflict):
				return nil, nil // the entry changed (left, offered elsewhere)
			case err != nil:
				return nil, fmt.Errorf("hold slot: %w", err)
			}
			w.Status = store.WaitlistOffered
			return &Offered{Offer: o, Entry: w, Facts: e.facts("offer", sv, st, start, end), Business: e.cat.Business}, nil
		}
	}
	return nil, nil
}

// LapseTx is what PassOnLapsed reaches in its transaction.
type LapseTx interface {
	FreedTx
	LapseWaitlistOffers(ctx context.Context, now time.Time, limit int) ([]store.WaitlistOffer, error)
}

// PassOnLapsed lapses up to limit offers whose time ran out and offers each
// slot to the next waiting person (SlotFreed), all through tx. Replicas
// running it at once never take the same offer.
func (s *Service) PassOnLapsed(ctx context.Context, tx LapseTx, limit int) (lapsed []store.WaitlistOffer, offered []Offered, err error) {
	lapsed, err = tx.LapseWaitlistOffers(ctx, s.now(), limit)
	if err != nil {
		return nil, nil, fmt.Errorf("lapse offers: %w", err)
	}
	for _, o := range lapsed {
		n, err := s.SlotFreed(ctx, tx, OfferSpan(o))
		if err != nil {
			return nil, nil, err
		}
		if n != nil {
			offered = append(offered, *n)
		}
	}
	return lapsed, offered, nil
}

// OfferSpan is an offer's slot as a freed booking, for SlotFreed.
func OfferSpan(o store.WaitlistOffer) store.Booking {
	return store.Booking{BusinessID: o.BusinessID, StaffID: o.StaffID, ServiceID: o.ServiceID, StartsAt: o.StartsAt,
		EndsAt: o.EndsAt, BlockStart: o.BlockStart, BlockEnd: o.BlockEnd, Status: store.BookingCancelled}
}

// offerFor checks an offer_reference for a create: the person's own, made
// to this link, live, and for exactly the slot asked for.
func (s *Service) offerFor(ctx context.Context, r CreateRequest, e *catalogEntry, sv *store.Service, now time.Time) (store.WaitlistOffer, error) {
	o, err := s.store.GetWaitlistOffer(ctx, r.OfferRef)
	if errors.Is(err, store.ErrNotFound) || (err == nil && o.AccountID != r.AccountID) {
		return store.WaitlistOffer{}, fieldErr(problem.CodeOfferNotFound, "offer_reference", "No offer of this person has the reference %q. Use the offer_reference from search_my_bookings status=waitlisted, or book an open time without it.", r.OfferRef)
	}
	if err != nil {
		return store.WaitlistOffer{}, fmt.Errorf("get offer: %w", err)
	}
	if o.LinkID != "" && o.LinkID != r.LinkID {
		return store.WaitlistOffer{}, fieldErr(problem.CodeOfferOtherLink, "offer_reference", "Offer %s was made to the app through which the person joined the waitlist, not to this one. The person can book it from that app, or book an open time here without offer_reference.", o.Reference)
	}
	if !o.Live(now) {
		return store.WaitlistOffer{}, fieldErr(problem.CodeOfferLapsed, "offer_reference", "Offer %s is no longer held (it ran out at %s, was used, or was passed on). Call check_business_availability for open times; the person stays on the waitlist for the next one.", o.Reference, o.HeldUntil.In(e.loc).Format(time.RFC3339))
	}
	st := e.stByRef[r.StaffRef]
	if o.BusinessID != e.cat.Business.ID || o.ServiceID != sv.ID || st == nil || o.StaffID != st.ID || !o.StartsAt.Equal(store.UTC(r.StartsAt)) {
		ost, osv := e.stByID[o.StaffID], e.svcByID[o.ServiceID]
		want := o.Reference
		if ost != nil && osv != nil {
			want = fmt.Sprintf("business_reference %s, service_reference %s, staff_reference %s, starts_at %s",
				e.cat.Business.Reference, osv.Reference, ost.Reference, o.StartsAt.In(e.loc).Format(time.RFC3339))
		}
		return store.WaitlistOffer{}, fieldErr(problem.CodeOfferMismatch, "offer_reference", "Offer %s holds another slot; book exactly the offered one: %s.", o.Reference, want)
	}
	return o, nil
}

// inWindow: an appointment from start to end fits waiting entry w — its
// local date inside the entry's dates, starting no earlier than its
// earliest time of day and ending that same day no later than its latest.
func (e *catalogEntry) inWindow(w store.WaitlistEntry, start, end time.Time) bool {
	local, endLocal := start.In(e.loc), end.In(e.loc)
	day := dateOf(local).String()
	return day >= w.FromDate && day <= w.ToDate && local.Hour()*60+local.Minute() >= w.EarliestMin &&
		dateOf(endLocal).String() == day && endLocal.Hour()*60+endLocal.Minute() <= w.LatestMin
}
