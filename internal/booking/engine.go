package booking

import (
	"sort"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Defaults for business settings left at zero.
const (
	defaultSlotInterval = 15 // minutes
	defaultHorizonDays  = 60
)

// span is a half-open interval of local minutes after midnight.
type span struct{ a, b int }

// windowsOn returns the merged, sorted windows of a weekday.
func windowsOn(ws []store.HoursWindow, wd time.Weekday) []span {
	var out []span
	for _, w := range ws {
		if w.Weekday == wd && w.StartMin < w.EndMin {
			out = append(out, span{max(w.StartMin, 0), min(w.EndMin, 1440)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].a < out[j].a })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && s.a <= merged[n-1].b {
			merged[n-1].b = max(merged[n-1].b, s.b)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// intersect returns the intersection of two merged, sorted span lists.
func intersect(x, y []span) []span {
	var out []span
	for i, j := 0, 0; i < len(x) && j < len(y); {
		a, b := max(x[i].a, y[j].a), min(x[i].b, y[j].b)
		if a < b {
			out = append(out, span{a, b})
		}
		if x[i].b < y[j].b {
			i++
		} else {
			j++
		}
	}
	return out
}

// rules are the time limits of a business relative to now.
type rules struct {
	now      time.Time
	earliest time.Time // now + minimum notice
	latest   time.Time // now + horizon
}

func (e *catalogEntry) rulesAt(now time.Time) rules {
	b := e.cat.Business
	h := b.HorizonDays
	if h <= 0 {
		h = defaultHorizonDays
	}
	return rules{now: now, earliest: now.Add(time.Duration(max(b.MinNoticeMinutes, 0)) * time.Minute),
		latest: now.Add(time.Duration(h) * 24 * time.Hour)}
}

// check answers the time-rule error for a start, or nil.
func (r rules) check(s time.Time) *Error {
	switch {
	case s.Before(r.now):
		return newErr(problem.CodeInThePast, "That time has already passed. Call check_business_availability for open times.")
	case s.Before(r.earliest):
		return newErr(problem.CodeTooSoon, "That time is inside the business's minimum notice. Call check_business_availability for the earliest open times.")
	case s.After(r.latest):
		return newErr(problem.CodeBeyondHorizon, "That time is further ahead than this business takes bookings. Pick a date within its booking horizon (see booking_horizon_days).")
	}
	return nil
}

func (e *catalogEntry) interval() time.Duration {
	i := e.cat.Business.SlotIntervalMinutes
	if i <= 0 {
		i = defaultSlotInterval
	}
	return time.Duration(i) * time.Minute
}

// dayBounds returns the span whose bookings can meet a slot of sv on local
// date d: from the local midnight minus the service's before-buffer to the
// next local midnight plus its duration and after-buffer.
func (e *catalogEntry) dayBounds(d date, sv *store.Service) (from, to time.Time) {
	from, _ = resolveLocal(e.loc, d, 0)
	to, _ = resolveLocal(e.loc, d.next(), 0)
	before := time.Duration(max(sv.BufferBeforeMinutes, 0)+1) * time.Minute
	after := time.Duration(max(sv.DurationMinutes, 0)+max(sv.BufferAfterMinutes, 0)+1) * time.Minute
	return from.Add(-before), to.Add(after)
}

// block is a span that blocks a staff member's slots: a booking that holds
// its slot, a slot held for a waiting person, a connected calendar's busy
// time.
type block struct {
	id, staffID string
	start, end  time.Time
}

// blocksOf answers the bookings that hold their slot as blocks.
func blocksOf(bks []store.Booking) []block {
	out := make([]block, 0, len(bks))
	for i := range bks {
		if b := &bks[i]; store.HoldsSlot(b.Status) {
			out = append(out, block{id: b.ID, staffID: b.StaffID, start: b.BlockStart, end: b.BlockEnd})
		}
	}
	return out
}

// slots is THE slot engine: the open starts of service sv with staff st on
// local date d, given what blocks the staff member's time (ignore: the id
// of a booking being moved), filtered by the time rules when r is non-nil.
func (e *catalogEntry) slots(st *store.Staff, sv *store.Service, d date, blocks []block, ignore string, r *rules) []Slot {
	wd := d.weekday()
	win := intersect(windowsOn(e.cat.OpeningHours, wd), windowsOn(e.cat.StaffHours[st.ID], wd))
	if len(win) == 0 {
		return nil
	}
	dur := time.Duration(sv.DurationMinutes) * time.Minute
	before := time.Duration(max(sv.BufferBeforeMinutes, 0)) * time.Minute
	after := time.Duration(max(sv.BufferAfterMinutes, 0)) * time.Minute
	step := int(e.interval() / time.Minute)
	off := e.cat.StaffTimeOff[st.ID]
	resolve := dayResolver(e.loc, d)
	var out []Slot
	for _, w := range win {
		wStart, _ := resolve(w.a)
		wEnd, _ := resolve(w.b)
	grid:
		for m := w.a; m < w.b; m += step {
			s, ok := resolve(m)
			if !ok || s.Before(wStart) {
				continue // a skipped local time does not exist
			}
			end := s.Add(dur)
			if end.After(wEnd) {
				continue
			}
			if r != nil && r.check(s) != nil {
				continue
			}
			for _, o := range off {
				if s.Before(o.EndsAt) && o.StartsAt.Before(end) {
					continue grid
				}
			}
			bs, be := s.Add(-before), end.Add(after)
			for i := range blocks {
				b := &blocks[i]
				if b.id == ignore || b.staffID != st.ID {
					continue
				}
				if bs.Before(b.end) && b.start.Before(be) {
					continue grid
				}
			}
			out = append(out, Slot{StartsAt: s.In(e.loc), EndsAt: end.In(e.loc)})
		}
	}
	return out
}

// validate checks that start is an open slot of sv with st: the time rules
// first (in_the_past, too_soon, beyond_booking_horizon), then membership in
// the engine's list for the start's local date (slot_taken otherwise).
func (e *catalogEntry) validate(st *store.Staff, sv *store.Service, start time.Time, bookings []store.Booking, ignore string, now time.Time) *Error {
	r := e.rulesAt(now)
	if err := r.check(start); err != nil {
		err.Field = "starts_at"
		return err
	}
	for _, sl := range e.slots(st, sv, dateOf(start.In(e.loc)), blocksOf(bookings), ignore, &r) {
		if sl.StartsAt.Equal(start) {
			return nil
		}
	}
	return errSlotTaken(nil)
}

func errSlotTaken(wrapped error) *Error {
	return newErr(problem.CodeSlotTaken, "That time is not open (already taken, outside working hours, or off the slot grid). Call check_business_availability for open times and pick one of them exactly.").Wrap(wrapped)
}
