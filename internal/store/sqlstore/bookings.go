package sqlstore

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

func toBooking(r bookingRow) store.Booking {
	return store.Booking{ID: r.ID, Reference: r.Reference, BusinessID: r.BusinessID, ServiceID: r.ServiceID, StaffID: r.StaffID,
		AccountID: r.AccountID, LinkID: r.LinkID, StartsAt: store.UTC(r.StartsAt), EndsAt: store.UTC(r.EndsAt),
		BlockStart: store.UTC(r.BlockStart), BlockEnd: store.UTC(r.BlockEnd), Status: r.Status, Version: r.Version,
		Notes: r.Notes, PaymentState: r.PaymentState, PriceCents: r.PriceCents, Currency: r.Currency,
		CancelReason: r.CancelReason, CancellationFeeCents: r.CancellationFeeCents,
		CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt), CancelledAt: utcPtr(r.CancelledAt),
		RespondBy: utcPtr(r.RespondBy)}
}

func fromBooking(b store.Booking) bookingRow {
	if b.PaymentState == "" {
		b.PaymentState = store.PaymentNone
	}
	return bookingRow{ID: b.ID, Reference: b.Reference, BusinessID: b.BusinessID, ServiceID: b.ServiceID, StaffID: b.StaffID,
		AccountID: b.AccountID, LinkID: b.LinkID, StartsAt: store.UTC(b.StartsAt), EndsAt: store.UTC(b.EndsAt),
		BlockStart: store.UTC(b.BlockStart), BlockEnd: store.UTC(b.BlockEnd), Status: b.Status, Version: b.Version,
		Notes: b.Notes, PaymentState: b.PaymentState, PriceCents: b.PriceCents, Currency: b.Currency,
		CancelReason: b.CancelReason, CancellationFeeCents: b.CancellationFeeCents,
		CreatedAt: store.UTC(b.CreatedAt), UpdatedAt: store.UTC(b.UpdatedAt), CancelledAt: utcPtr(b.CancelledAt),
		RespondBy: utcPtr(b.RespondBy)}
}

// holding is the condition "the booking holds its slot"
// (store.HoldingStatuses), written out so that SQLite's partial index
// bookings_staff_block_end (migration 00022), whose condition it repeats,
// serves it: a bound parameter would not match the index's condition.
const holding = "status IN ('pending', 'confirmed')"

// checkOverlap is SQLite's half of the no-overlap rule: inside an IMMEDIATE
// transaction nobody else can write between this check and the insert.
// PostgreSQL relies on its exclusion constraint instead.
func (s *Store) checkOverlap(tx *gorm.DB, b bookingRow) error {
	if s.dialect != "sqlite" || !store.HoldsSlot(b.Status) {
		return nil
	}
	var n int64
	err := tx.Model(&bookingRow{}).
		Where("staff_id = ? AND "+holding+" AND id <> ? AND block_start < ? AND block_end > ?",
			b.StaffID, b.ID, b.BlockEnd, b.BlockStart).
		Limit(1).Count(&n).Error
	if err != nil {
		return err
	}
	if n > 0 {
		return store.ErrOverlap
	}
	return nil
}

// lockStaff serializes confirmed-booking writes per staff member on
// PostgreSQL with transaction-scoped advisory locks, taken in a fixed order.
// The exclusion constraint alone is correct but, when several transactions
// insert overlapping ranges at once, their constraint checks wait on each
// other's uncommitted rows and deadlock (40P01) or queue up to the statement
// timeout; with the lock, the second writer waits for the first to commit
// and then gets a clean exclusion violation (slot_taken). SQLite needs none:
// its transactions already hold the database write lock.
func (s *Store) lockStaff(tx *gorm.DB, staffIDs ...string) error {
	if s.dialect != "postgres" {
		return nil
	}
	ids := slices.Clone(staffIDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if id == "" {
			continue
		}
		if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 7))", "staff:"+id).Error; err != nil {
			return err
		}
	}
	return nil
}

// InsertBooking inserts a booking; an overlap answers ErrOverlap.
func (s *Store) InsertBooking(ctx context.Context, b store.Booking) error {
	r := fromBooking(b)
	return s.tx(ctx, func(tx *gorm.DB) error {
		if store.HoldsSlot(r.Status) {
			if err := s.lockStaff(tx, r.StaffID); err != nil {
				return err
			}
		}
		if err := s.checkOverlap(tx, r); err != nil {
			return err
		}
		if err := s.checkHeld(tx, r); err != nil {
			return err
		}
		return tx.Create(&r).Error
	})
}

// GetBooking returns a booking by id.
func (s *Store) GetBooking(ctx context.Context, id string) (store.Booking, error) {
	var r bookingRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.Booking{}, translate(err)
	}
	return toBooking(r), nil
}

// GetBookingByReference returns a booking by its public reference.
func (s *Store) GetBookingByReference(ctx context.Context, ref string) (store.Booking, error) {
	var r bookingRow
	if err := s.q(ctx).Take(&r, "reference = ?", ref).Error; err != nil {
		return store.Booking{}, translate(err)
	}
	return toBooking(r), nil
}

// UpdateBooking locks the booking, applies fn and writes the result.
func (s *Store) UpdateBooking(ctx context.Context, id string, fn func(store.Booking) (store.Booking, error)) (store.Booking, error) {
	var out store.Booking
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r bookingRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		old := toBooking(r)
		b, err := fn(old)
		if err != nil {
			return err
		}
		b.ID, b.Reference, b.CreatedAt = old.ID, old.Reference, old.CreatedAt
		if b.UpdatedAt.IsZero() {
			b.UpdatedAt = store.SystemClock()
		}
		nr := fromBooking(b)
		// A booking that leaves its slot (cancelled, declined, moved) also
		// takes the lock: the waitlist may hold the freed slot in this
		// transaction (store.Waitlist HoldSlot), and a writer that took the
		// lock first must not wait on this row while this one waits on it.
		if store.HoldsSlot(nr.Status) || store.HoldsSlot(r.Status) {
			if err := s.lockStaff(tx, r.StaffID, nr.StaffID); err != nil {
				return err
			}
		}
		if err := s.checkOverlap(tx, nr); err != nil {
			return err
		}
		if moved := nr.StaffID != r.StaffID || !nr.BlockStart.Equal(r.BlockStart) || !nr.BlockEnd.Equal(r.BlockEnd) || r.Status != nr.Status; moved {
			if err := s.checkHeld(tx, nr); err != nil {
				return err
			}
		}
		// SkipHooks: gorm's Save would otherwise overwrite updated_at with
		// the wall clock, ignoring the caller's (possibly pinned) clock.
		if err := tx.Session(&gorm.Session{SkipHooks: true}).Save(&nr).Error; err != nil {
			return err
		}
		out = b
		return nil
	})
	return out, err
}

// blockedSpanOverlaps is, on PostgreSQL, the condition "the blocked span of
// table's booking overlaps [from, to)" written as the no-overlap exclusion
// constraint's own expression, so that its GiST index on (staff_id, span)
// finds the bookings of a day directly: with block_start and block_end
// compared apart it can use only staff_id, and reads every booking the
// staff members ever had (TestStaffBookingsAtScale). The caller keeps the
// plain comparisons too, which say the same; SQLite needs nothing more,
// since its index on (staff_id, block_end) finds them by where they end
// (migration 00009, TestStaffBookingsAtScaleSQLite).
func (s *Store) blockedSpanOverlaps(table string, from, to time.Time) (string, []any) {
	if s.dialect != "postgres" {
		return "", nil
	}
	return " AND tstzrange(" + table + ".block_start, " + table + ".block_end, '[)') && tstzrange(?, ?, '[)')",
		[]any{store.UTC(from), store.UTC(to)}
}

// ListStaffBookings returns the bookings of the staff members that hold
// their slot (pending or confirmed) and intersect [from, to), the slots
// held for waiting people (as confirmed bookings with the offer's id), and
// the busy times their connected calendars' last syncs stored (as
// bookings with ID store.CalendarBusyID), in one statement, earliest
// first.
func (s *Store) ListStaffBookings(ctx context.Context, staffIDs []string, from, to time.Time) ([]store.Booking, error) {
	if len(staffIDs) == 0 {
		return nil, nil
	}
	var rows []bookingRow
	span, spanArgs := s.blockedSpanOverlaps("bookings", from, to)
	args := append([]any{staffIDs, store.UTC(to), store.UTC(from)}, spanArgs...)
	args = append(args, store.BookingConfirmed, staffIDs, store.OfferHeld, store.UTC(to), store.UTC(from))
	args = append(args, store.CalendarBusyID, store.BookingConfirmed, staffIDs, store.UTC(to), store.UTC(from.Add(-store.MaxBusySpan)), store.UTC(from))
	// Three sources block a slot, in one statement: bookings that hold it
	// (pending or confirmed), a slot held for a waiting person
	// (waitlist_offers, until it is used or passed on; docs/design.md "The
	// waitlist"), and the busy times of the staff's connected calendars as
	// the last sync stored them (docs/calendars.md), with the id
	// store.CalendarBusyID. The synthetic branches fill bookingColumns
	// with NULLs and blanks.
	err := s.q(ctx).Raw(`SELECT `+bookingColumns+` FROM bookings
WHERE staff_id IN ? AND `+holding+` AND block_start < ? AND block_end > ?`+span+`
UNION ALL
SELECT id, reference, business_id, service_id, staff_id, account_id, link_id, starts_at, ends_at, block_start, block_end,
  ?, 1, '', 'none', 0, '', '', 0, created_at, updated_at, NULL, NULL
FROM waitlist_offers WHERE staff_id IN ? AND status = ? AND block_start < ? AND block_end > ?
UNION ALL
SELECT CAST(? AS text), '', '', '', staff_id, '', '', starts_at, ends_at, starts_at, ends_at,
  CAST(? AS text), 0, '', 'none', 0, '', '', 0, starts_at, starts_at, NULL, NULL
FROM calendar_busy WHERE staff_id IN ? AND starts_at < ? AND starts_at > ? AND ends_at > ?
ORDER BY block_start, id, staff_id, block_end`, args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// accountBookingsByStates is ListAccountBookings for bookings in any of
// several states: upcoming ones (from now on, soonest first) or, when
// upcoming is false, those that started before now (unless now is zero),
// latest first. One read per state from bookings_account_status, each in
// the index's order and cut at offset+limit+1, merged here: every read
// matches its index whatever the statistics, where one statement over
// several states was answered by reading all of them and sorting
// (docs/design.md, "Bookings at size").
func (s *Store) accountBookingsByStates(ctx context.Context, f store.BookingFilter, states []string, now time.Time, upcoming bool) ([]store.Booking, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	offset := max(f.Offset, 0)
	var rows []bookingRow
	for _, st := range states {
		var part []bookingRow
		q := s.q(ctx).Where("account_id = ? AND status = ?", f.AccountID, st)
		switch {
		case upcoming:
			q = q.Where("starts_at >= ?", now).Order("starts_at ASC, id ASC")
		case !now.IsZero():
			q = q.Where("starts_at < ?", now).Order("starts_at DESC, id DESC")
		default:
			q = q.Order("starts_at DESC, id DESC")
		}
		if err := q.Limit(offset + limit + 1).Find(&part).Error; err != nil {
			return nil, translate(err)
		}
		rows = append(rows, part...)
	}
	slices.SortFunc(rows, func(a, b bookingRow) int {
		c := a.StartsAt.Compare(b.StartsAt)
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if upcoming {
			return c
		}
		return -c
	})
	if offset >= len(rows) {
		return []store.Booking{}, nil
	}
	rows = rows[offset:min(len(rows), offset+limit+1)]
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// StaffDay implements store.Bookings: the business row with its calendar
// tag, and the bookings and held offers that block the window, one LEFT
// JOIN from the business row (one row with no booking when the window is
// free), scanned column by column. The calendars' busy times are not read:
// the booking engine keeps them in memory under the tag (CalendarBusyDay),
// so that a day with connected calendars costs what a day without them
// does (BenchmarkAvailabilityConnectedCalendar).
func (s *Store) StaffDay(ctx context.Context, reference string, staffIDs []string, from, to time.Time) (store.StaffDay, error) {
	ids := staffIDs
	if len(ids) == 0 {
		ids = []string{""} // no staff: the business row alone
	}
	span, spanArgs := s.blockedSpanOverlaps("k", from, to)
	args := append([]any{ids, store.UTC(to), store.UTC(from)}, spanArgs...)
	args = append(args, reference, ids, store.OfferHeld, store.UTC(to), store.UTC(from), reference)
	// Held waitlist offers block as bookings do (ListStaffBookings).
	rs, err := s.q(ctx).Raw(`SELECT b.id, b.updated_at, b.calendar_tag, k.id, k.staff_id, k.block_start, k.block_end
FROM businesses b
LEFT JOIN bookings k ON k.staff_id IN ? AND k.`+holding+` AND k.block_start < ? AND k.block_end > ?`+span+`
WHERE b.reference = ?
UNION ALL
SELECT b.id, b.updated_at, b.calendar_tag, o.id, o.staff_id, o.block_start, o.block_end
FROM businesses b
JOIN waitlist_offers o ON o.staff_id IN ? AND o.status = ? AND o.block_start < ? AND o.block_end > ?
WHERE b.reference = ?`, args...).Rows()
	if err != nil {
		return store.StaffDay{}, translate(err)
	}
	defer rs.Close()
	var d store.StaffDay
	for rs.Next() {
		var (
			bid, tag            string
			updated             time.Time
			kid, staff          *string
			blockStart, blockTo *time.Time
		)
		if err := rs.Scan(&bid, &updated, &tag, &kid, &staff, &blockStart, &blockTo); err != nil {
			return store.StaffDay{}, translate(err)
		}
		d.Found, d.BusinessID, d.UpdatedAt, d.CalendarTag = true, bid, store.UTC(updated), tag
		if kid != nil {
			d.Busy = append(d.Busy, store.BusySpan{BookingID: *kid, StaffID: deref(staff),
				BlockStart: store.UTC(deref(blockStart)), BlockEnd: store.UTC(deref(blockTo))})
		}
	}
	if err := rs.Err(); err != nil {
		return store.StaffDay{}, translate(err)
	}
	// Earliest first, then by id, sorted here: SQLite's sorter over the
	// union costs more than the statement's reads.
	sortSpans(d.Busy)
	return d, nil
}

// sortSpans orders blocked spans earliest first, then by id, staff and end.
func sortSpans(spans []store.BusySpan) {
	sort.SliceStable(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if !a.BlockStart.Equal(b.BlockStart) {
			return a.BlockStart.Before(b.BlockStart)
		}
		if a.BookingID != b.BookingID {
			return a.BookingID < b.BookingID
		}
		if a.StaffID != b.StaffID {
			return a.StaffID < b.StaffID
		}
		return a.BlockEnd.Before(b.BlockEnd)
	})
}

// CalendarBusyDay implements store.Bookings: the business's calendar tag,
// and each of its staff's connected calendars with its busy tag and, unless
// that tag is known, its busy times in [from, to), one LEFT JOIN from the
// business row, so that the tags and the times come from one snapshot. A
// known calendar is joined on a NULL staff id, so that the index is not
// even searched for it (a condition on the tag alone would be checked only
// after its rows were read). The lower bound on starts_at keeps the read on
// the (staff_id, starts_at) index: no busy time is longer than
// store.MaxBusySpan.
func (s *Store) CalendarBusyDay(ctx context.Context, businessID string, from, to time.Time, known []string) (store.CalendarDay, error) {
	if len(known) == 0 {
		known = []string{"-"} // no tag is "-" (store.RandomString); NOT IN () is not SQL
	}
	rs, err := s.q(ctx).Raw(`SELECT b.calendar_tag, s.staff_id, s.busy_tag, c.starts_at, c.ends_at
FROM businesses b
LEFT JOIN staff_calendars s ON s.business_id = b.id
LEFT JOIN calendar_busy c ON c.staff_id = CASE WHEN s.busy_tag NOT IN ? THEN s.staff_id END
  AND c.starts_at < ? AND c.starts_at > ? AND c.ends_at > ?
WHERE b.id = ?`, known, store.UTC(to), store.UTC(from.Add(-store.MaxBusySpan)), store.UTC(from), businessID).Rows()
	if err != nil {
		return store.CalendarDay{}, translate(err)
	}
	defer rs.Close()
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		isKnown[k] = true
	}
	var d store.CalendarDay
	found := false
	byStaff := map[string]int{}
	for rs.Next() {
		var (
			tag            string
			staff, busyTag *string
			start, stop    *time.Time
		)
		if err := rs.Scan(&tag, &staff, &busyTag, &start, &stop); err != nil {
			return store.CalendarDay{}, translate(err)
		}
		found, d.Tag = true, tag
		if staff == nil {
			continue // no calendar in the business
		}
		i, ok := byStaff[*staff]
		if !ok {
			i = len(d.Staff)
			byStaff[*staff] = i
			d.Staff = append(d.Staff, store.StaffCalendarDay{StaffID: *staff, BusyTag: deref(busyTag), Known: isKnown[deref(busyTag)]})
		}
		if start != nil {
			d.Staff[i].Busy = append(d.Staff[i].Busy, store.BusySpan{BookingID: store.CalendarBusyID, StaffID: *staff,
				BlockStart: store.UTC(*start), BlockEnd: store.UTC(deref(stop))})
		}
	}
	if err := rs.Err(); err != nil {
		return store.CalendarDay{}, translate(err)
	}
	if !found {
		return store.CalendarDay{}, store.ErrNotFound
	}
	sort.Slice(d.Staff, func(i, j int) bool { return d.Staff[i].StaffID < d.Staff[j].StaffID })
	for _, c := range d.Staff {
		sortSpans(c.Busy)
	}
	return d, nil
}

// ListAccountBookings returns up to f.Limit+1 bookings of a person:
// upcoming (confirmed, not yet started, soonest first), past (confirmed or
// completed that started before now, latest first), cancelled, or all.
// Each order is that of an index (bookings_account_status for one state,
// bookings_account otherwise, migration 00024), read backwards for
// "latest first", so ties on the start go by id the same way.
func (s *Store) ListAccountBookings(ctx context.Context, f store.BookingFilter) ([]store.Booking, error) {
	q := s.q(ctx).Where("account_id = ?", f.AccountID)
	now := store.UTC(f.Now)
	switch f.Status {
	case "upcoming":
		return s.accountBookingsByStates(ctx, f, store.HoldingStatuses, now, true)
	case "past":
		return s.accountBookingsByStates(ctx, f, []string{store.BookingConfirmed, store.BookingCompleted, store.BookingNoShow}, now, false)
	case "cancelled":
		return s.accountBookingsByStates(ctx, f, []string{store.BookingCancelled, store.BookingDeclined}, time.Time{}, false)
	case "pending":
		q = q.Where("status = ?", store.BookingPending).Order("starts_at ASC, id")
	default:
		q = q.Order("starts_at DESC, id DESC")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	var rows []bookingRow
	if err := q.Limit(limit + 1).Offset(max(f.Offset, 0)).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// ListBusinessBookings returns up to f.Limit+1 bookings of a business that
// start in [f.From, f.To), earliest first, through bookings_business_starts.
func (s *Store) ListBusinessBookings(ctx context.Context, f store.BusinessBookingFilter) ([]store.Booking, error) {
	q := s.q(ctx).Where("business_id = ? AND starts_at >= ? AND starts_at < ?", f.BusinessID, store.UTC(f.From), store.UTC(f.To))
	if f.StaffID != "" {
		q = q.Where("staff_id = ?", f.StaffID)
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN ?", f.Statuses)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	var rows []bookingRow
	if err := q.Order("starts_at, id").Limit(limit + 1).Offset(max(f.Offset, 0)).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// ListDuePending returns up to limit pending bookings due at now, through
// the partial index bookings_pending_respond_by (migration 00022).
func (s *Store) ListDuePending(ctx context.Context, now time.Time, limit int) ([]store.Booking, error) {
	var rows []bookingRow
	err := s.q(ctx).Where("status = 'pending' AND respond_by <= ?", store.UTC(now)).
		Order("respond_by, id").Limit(max(limit, 1)).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// AddBookingEvent appends to a booking's history.
func (s *Store) AddBookingEvent(ctx context.Context, e store.BookingEvent) error {
	if e.ID == "" {
		e.ID = store.NewID("bev")
	}
	r := bookingEventRow{ID: e.ID, BookingID: e.BookingID, Version: e.Version, Action: e.Action, StaffID: e.StaffID,
		StartsAt: store.UTC(e.StartsAt), EndsAt: store.UTC(e.EndsAt), At: store.UTC(e.At)}
	return s.create(ctx, &r)
}

// ListBookingEvents returns a booking's history, oldest first.
func (s *Store) ListBookingEvents(ctx context.Context, bookingID string) ([]store.BookingEvent, error) {
	var rows []bookingEventRow
	if err := s.q(ctx).Where("booking_id = ?", bookingID).Order("version, at").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.BookingEvent, len(rows))
	for i, r := range rows {
		out[i] = store.BookingEvent{ID: r.ID, BookingID: r.BookingID, Version: r.Version, Action: r.Action, StaffID: r.StaffID,
			StartsAt: store.UTC(r.StartsAt), EndsAt: store.UTC(r.EndsAt), At: store.UTC(r.At)}
	}
	return out, nil
}

// bookingColumns are bookingRow's columns in its field order.
const bookingColumns = `id, reference, business_id, service_id, staff_id, account_id, link_id, starts_at, ends_at, block_start, block_end,
  status, version, notes, payment_state, price_cents, currency, cancel_reason, cancellation_fee_cents, created_at, updated_at, cancelled_at, respond_by`
