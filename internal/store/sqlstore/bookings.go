package sqlstore

import (
	"context"
	"slices"
	"sort"
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
		CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt), CancelledAt: utcPtr(r.CancelledAt)}
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
		CreatedAt: store.UTC(b.CreatedAt), UpdatedAt: store.UTC(b.UpdatedAt), CancelledAt: utcPtr(b.CancelledAt)}
}

// checkOverlap is SQLite's half of the no-overlap rule: inside an IMMEDIATE
// transaction nobody else can write between this check and the insert.
// PostgreSQL relies on its exclusion constraint instead.
func (s *Store) checkOverlap(tx *gorm.DB, b bookingRow) error {
	if s.dialect != "sqlite" || b.Status != store.BookingConfirmed {
		return nil
	}
	var n int64
	err := tx.Model(&bookingRow{}).
		Where("staff_id = ? AND status = ? AND id <> ? AND block_start < ? AND block_end > ?",
			b.StaffID, store.BookingConfirmed, b.ID, b.BlockEnd, b.BlockStart).
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
		if r.Status == store.BookingConfirmed {
			if err := s.lockStaff(tx, r.StaffID); err != nil {
				return err
			}
		}
		if err := s.checkOverlap(tx, r); err != nil {
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
		if nr.Status == store.BookingConfirmed {
			if err := s.lockStaff(tx, r.StaffID, nr.StaffID); err != nil {
				return err
			}
		}
		if err := s.checkOverlap(tx, nr); err != nil {
			return err
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

// ListStaffBookings returns confirmed bookings of the staff members that
// intersect [from, to), and the busy times their connected calendars'
// last syncs stored (as bookings with ID store.CalendarBusyID), in one
// statement.
func (s *Store) ListStaffBookings(ctx context.Context, staffIDs []string, from, to time.Time) ([]store.Booking, error) {
	if len(staffIDs) == 0 {
		return nil, nil
	}
	var rows []bookingRow
	span, spanArgs := s.blockedSpanOverlaps("bookings", from, to)
	args := append([]any{staffIDs, store.BookingConfirmed, store.UTC(to), store.UTC(from)}, spanArgs...)
	args = append(args, store.CalendarBusyID, store.BookingConfirmed, staffIDs, store.UTC(to), store.UTC(from.Add(-store.MaxBusySpan)), store.UTC(from))
	err := s.q(ctx).Raw(`SELECT id, staff_id, status, block_start, block_end, reference, business_id, service_id, account_id,
       link_id, starts_at, ends_at, version, notes, payment_state, price_cents, currency, cancel_reason,
       cancellation_fee_cents, created_at, updated_at, cancelled_at
FROM bookings WHERE staff_id IN ? AND status = ? AND block_start < ? AND block_end > ?`+span+`
UNION ALL
SELECT CAST(? AS text), staff_id, CAST(? AS text), starts_at, ends_at, '', '', '', '', '', starts_at, ends_at, 0, '', '', 0, '', '', 0, starts_at, starts_at, NULL
FROM calendar_busy WHERE staff_id IN ? AND starts_at < ? AND starts_at > ? AND ends_at > ?
ORDER BY block_start`, args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}

// StaffDay implements store.Store: the business row and its staff's
// confirmed bookings in the window, one LEFT JOIN from the business row
// (one row with no booking when the window is free), scanned column by
// column.
func (s *Store) StaffDay(ctx context.Context, reference string, staffIDs []string, from, to time.Time) (store.StaffDay, error) {
	ids := staffIDs
	if len(ids) == 0 {
		ids = []string{""} // no staff: the business row alone
	}
	span, spanArgs := s.blockedSpanOverlaps("k", from, to)
	args := append([]any{ids, store.BookingConfirmed, store.UTC(to), store.UTC(from)}, spanArgs...)
	args = append(args, reference, store.CalendarBusyID, ids, store.UTC(to), store.UTC(from.Add(-store.MaxBusySpan)), store.UTC(from))
	// The second part adds the busy times of the staff's connected
	// calendars as the last sync stored them (docs/calendars.md), in the
	// same statement.
	rs, err := s.q(ctx).Raw(`SELECT b.id, b.updated_at, k.id, k.staff_id, k.block_start, k.block_end
FROM businesses b
LEFT JOIN bookings k ON k.staff_id IN ? AND k.status = ? AND k.block_start < ? AND k.block_end > ?`+span+`
WHERE b.reference = ?
UNION ALL
SELECT NULL, NULL, CAST(? AS text), c.staff_id, c.starts_at, c.ends_at
FROM calendar_busy c WHERE c.staff_id IN ? AND c.starts_at < ? AND c.starts_at > ? AND c.ends_at > ?`, args...).Rows()
	if err != nil {
		return store.StaffDay{}, translate(err)
	}
	defer rs.Close()
	var d store.StaffDay
	for rs.Next() {
		var (
			bid                 *string
			updated             *time.Time
			kid, staff          *string
			blockStart, blockTo *time.Time
		)
		if err := rs.Scan(&bid, &updated, &kid, &staff, &blockStart, &blockTo); err != nil {
			return store.StaffDay{}, translate(err)
		}
		if bid != nil {
			d.Found, d.BusinessID, d.UpdatedAt = true, *bid, store.UTC(deref(updated))
		}
		if kid != nil {
			d.Busy = append(d.Busy, store.BusySpan{BookingID: *kid, StaffID: deref(staff),
				BlockStart: store.UTC(deref(blockStart)), BlockEnd: store.UTC(deref(blockTo))})
		}
	}
	if err := rs.Err(); err != nil {
		return store.StaffDay{}, translate(err)
	}
	// Earliest first, sorted here: SQLite's sorter over the union costs
	// more than the statement's reads (BenchmarkAvailabilityConnectedCalendar).
	sort.SliceStable(d.Busy, func(i, j int) bool { return d.Busy[i].BlockStart.Before(d.Busy[j].BlockStart) })
	return d, nil
}

// ListAccountBookings returns up to f.Limit+1 bookings of a person:
// upcoming (confirmed, not yet started, soonest first), past (confirmed or
// completed that started before now, latest first), cancelled, or all.
func (s *Store) ListAccountBookings(ctx context.Context, f store.BookingFilter) ([]store.Booking, error) {
	q := s.q(ctx).Where("account_id = ?", f.AccountID)
	now := store.UTC(f.Now)
	switch f.Status {
	case "upcoming":
		q = q.Where("status = ? AND starts_at >= ?", store.BookingConfirmed, now).Order("starts_at ASC, id")
	case "past":
		q = q.Where("status IN ? AND starts_at < ?", []string{store.BookingConfirmed, store.BookingCompleted}, now).Order("starts_at DESC, id")
	case "cancelled":
		q = q.Where("status = ?", store.BookingCancelled).Order("starts_at DESC, id")
	default:
		q = q.Order("starts_at DESC, id")
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
