package sqlstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

type callbackRow struct {
	ID             string `gorm:"primaryKey"`
	Reference      string
	BusinessID     string
	AccountID      string
	LinkID         string
	ClientID       string
	Topic          string
	PreferredTimes string
	Notes          string
	Status         string
	CreatedAt      time.Time
	DoneAt         *time.Time
	DoneBy         string
}

func (callbackRow) TableName() string { return "callback_requests" }

func toCallback(r callbackRow) store.CallbackRequest {
	return store.CallbackRequest{ID: r.ID, Reference: r.Reference, BusinessID: r.BusinessID, AccountID: r.AccountID,
		LinkID: r.LinkID, ClientID: r.ClientID, Topic: r.Topic, PreferredTimes: r.PreferredTimes, Notes: r.Notes,
		Status: r.Status, CreatedAt: store.UTC(r.CreatedAt), DoneAt: utcPtr(r.DoneAt), DoneBy: r.DoneBy}
}

// InsertCallbackRequest implements store.Callbacks.
func (s *Store) InsertCallbackRequest(ctx context.Context, c store.CallbackRequest) error {
	r := callbackRow{ID: c.ID, Reference: c.Reference, BusinessID: c.BusinessID, AccountID: c.AccountID, LinkID: c.LinkID,
		ClientID: c.ClientID, Topic: c.Topic, PreferredTimes: c.PreferredTimes, Notes: c.Notes, Status: c.Status,
		CreatedAt: store.UTC(c.CreatedAt), DoneAt: utcPtr(c.DoneAt), DoneBy: c.DoneBy}
	if r.Status == "" {
		r.Status = store.CallbackOpen
	}
	return translate(s.q(ctx).Create(&r).Error)
}

// ListCallbackRequests implements store.Callbacks.
func (s *Store) ListCallbackRequests(ctx context.Context, businessID, status string, limit int) ([]store.CallbackRequest, error) {
	if limit <= 0 {
		limit = 50
	}
	q := s.q(ctx).Where("business_id = ?", businessID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	var rows []callbackRow
	if err := q.Order("created_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.CallbackRequest, len(rows))
	for i, r := range rows {
		out[i] = toCallback(r)
	}
	return out, nil
}

// MarkCallbackDone implements store.Callbacks.
func (s *Store) MarkCallbackDone(ctx context.Context, businessID, reference, by string, at time.Time) (store.CallbackRequest, error) {
	var out store.CallbackRequest
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r callbackRow
		if err := lockFor(tx, s.dialect).Take(&r, "business_id = ? AND reference = ?", businessID, reference).Error; err != nil {
			return err
		}
		if r.Status != store.CallbackOpen {
			return store.ErrConflict
		}
		t := store.UTC(at)
		r.Status, r.DoneAt, r.DoneBy = store.CallbackDone, &t, by
		if err := tx.Model(&callbackRow{}).Where("id = ?", r.ID).
			Updates(map[string]any{"status": r.Status, "done_at": t, "done_by": by}).Error; err != nil {
			return err
		}
		out = toCallback(r)
		return nil
	})
	return out, translate(err)
}

type waitlistEntryRow struct {
	ID          string `gorm:"primaryKey"`
	Reference   string
	AccountID   string
	LinkID      string
	BusinessID  string
	ServiceID   string
	StaffID     string
	FromDate    string
	ToDate      string
	EarliestMin int
	LatestMin   int
	Status      string
	Position    int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (waitlistEntryRow) TableName() string { return "waitlist_entries" }

func toEntry(r waitlistEntryRow) store.WaitlistEntry {
	return store.WaitlistEntry{ID: r.ID, Reference: r.Reference, AccountID: r.AccountID, LinkID: r.LinkID,
		BusinessID: r.BusinessID, ServiceID: r.ServiceID, StaffID: r.StaffID, FromDate: r.FromDate, ToDate: r.ToDate,
		EarliestMin: r.EarliestMin, LatestMin: r.LatestMin, Status: r.Status,
		CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

func fromEntry(e store.WaitlistEntry) waitlistEntryRow {
	return waitlistEntryRow{ID: e.ID, Reference: e.Reference, AccountID: e.AccountID, LinkID: e.LinkID,
		BusinessID: e.BusinessID, ServiceID: e.ServiceID, StaffID: e.StaffID, FromDate: e.FromDate, ToDate: e.ToDate,
		EarliestMin: e.EarliestMin, LatestMin: e.LatestMin, Status: e.Status,
		CreatedAt: store.UTC(e.CreatedAt), UpdatedAt: store.UTC(e.UpdatedAt)}
}

type waitlistOfferRow struct {
	ID         string `gorm:"primaryKey"`
	Reference  string
	EntryID    string
	AccountID  string
	LinkID     string
	BusinessID string
	ServiceID  string
	StaffID    string
	StartsAt   time.Time
	EndsAt     time.Time
	BlockStart time.Time
	BlockEnd   time.Time
	HeldUntil  time.Time
	Status     string
	BookingID  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (waitlistOfferRow) TableName() string { return "waitlist_offers" }

func toOffer(r waitlistOfferRow) store.WaitlistOffer {
	return store.WaitlistOffer{ID: r.ID, Reference: r.Reference, EntryID: r.EntryID, AccountID: r.AccountID,
		LinkID: r.LinkID, BusinessID: r.BusinessID, ServiceID: r.ServiceID, StaffID: r.StaffID,
		StartsAt: store.UTC(r.StartsAt), EndsAt: store.UTC(r.EndsAt), BlockStart: store.UTC(r.BlockStart),
		BlockEnd: store.UTC(r.BlockEnd), HeldUntil: store.UTC(r.HeldUntil), Status: r.Status, BookingID: r.BookingID,
		CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

// InsertWaitlistEntry implements store.Waitlist.
func (s *Store) InsertWaitlistEntry(ctx context.Context, e store.WaitlistEntry) error {
	r := fromEntry(e)
	if r.Status == "" {
		r.Status = store.WaitlistWaiting
	}
	return s.tx(ctx, func(tx *gorm.DB) error {
		var last *int64
		if err := tx.Raw("SELECT MAX(position) FROM waitlist_entries WHERE business_id = ?", r.BusinessID).Scan(&last).Error; err != nil {
			return err
		}
		if last != nil {
			r.Position = *last + 1
		} else {
			r.Position = 1
		}
		return tx.Create(&r).Error
	})
}

// GetWaitlistEntry implements store.Waitlist.
func (s *Store) GetWaitlistEntry(ctx context.Context, reference string) (store.WaitlistEntry, error) {
	var r waitlistEntryRow
	if err := s.q(ctx).Take(&r, "reference = ?", reference).Error; err != nil {
		return store.WaitlistEntry{}, translate(err)
	}
	return toEntry(r), nil
}

// ListAccountWaitlist implements store.Waitlist.
func (s *Store) ListAccountWaitlist(ctx context.Context, accountID string, limit, offset int) ([]store.WaitlistEntry, error) {
	if limit <= 0 {
		limit = 10
	}
	var rows []waitlistEntryRow
	err := s.q(ctx).Where("account_id = ? AND status IN ?", accountID, []string{store.WaitlistWaiting, store.WaitlistOffered}).
		Order("created_at, id").Limit(limit + 1).Offset(max(offset, 0)).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.WaitlistEntry, len(rows))
	for i, r := range rows {
		out[i] = toEntry(r)
	}
	return out, nil
}

// ListWaitingEntries implements store.Waitlist.
func (s *Store) ListWaitingEntries(ctx context.Context, businessID string) ([]store.WaitlistEntry, error) {
	var rows []waitlistEntryRow
	err := s.q(ctx).Where("business_id = ? AND status = ?", businessID, store.WaitlistWaiting).
		Order("position, id").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.WaitlistEntry, len(rows))
	for i, r := range rows {
		out[i] = toEntry(r)
	}
	return out, nil
}

// UpdateWaitlistEntry implements store.Waitlist.
func (s *Store) UpdateWaitlistEntry(ctx context.Context, id string, fn func(store.WaitlistEntry) (store.WaitlistEntry, error)) (store.WaitlistEntry, error) {
	var out store.WaitlistEntry
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r waitlistEntryRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		old := toEntry(r)
		e, err := fn(old)
		if err != nil {
			return err
		}
		e.ID, e.Reference, e.CreatedAt = old.ID, old.Reference, old.CreatedAt
		nr := fromEntry(e)
		nr.Position = r.Position
		if err := tx.Session(&gorm.Session{SkipHooks: true}).Save(&nr).Error; err != nil {
			return err
		}
		out = e
		return nil
	})
	return out, translate(err)
}

// heldOver reports whether a live offer (at now) of the staff member held
// for another account than accountID overlaps [from, to).
func (s *Store) heldOver(tx *gorm.DB, staffID, accountID string, from, to, now time.Time) (bool, error) {
	var n int64
	err := tx.Model(&waitlistOfferRow{}).
		Where("staff_id = ? AND status = ? AND held_until > ? AND account_id <> ? AND block_start < ? AND block_end > ?",
			staffID, store.OfferHeld, store.UTC(now), accountID, store.UTC(to), store.UTC(from)).
		Limit(1).Count(&n).Error
	return n > 0, err
}

// checkHeld refuses (ErrOverlap) a confirmed booking over a slot held for
// someone else. The caller holds the staff member's lock (lockStaff on
// PostgreSQL; SQLite's write lock), under which offers are also written.
func (s *Store) checkHeld(tx *gorm.DB, b bookingRow) error {
	if !store.HoldsSlot(b.Status) {
		return nil
	}
	now := b.UpdatedAt
	if now.IsZero() {
		now = store.SystemClock()
	}
	held, err := s.heldOver(tx, b.StaffID, b.AccountID, b.BlockStart, b.BlockEnd, now)
	if err != nil {
		return err
	}
	if held {
		return store.ErrOverlap
	}
	return nil
}

// HoldSlot implements store.Waitlist.
func (s *Store) HoldSlot(ctx context.Context, o store.WaitlistOffer) error {
	r := waitlistOfferRow{ID: o.ID, Reference: o.Reference, EntryID: o.EntryID, AccountID: o.AccountID, LinkID: o.LinkID,
		BusinessID: o.BusinessID, ServiceID: o.ServiceID, StaffID: o.StaffID, StartsAt: store.UTC(o.StartsAt),
		EndsAt: store.UTC(o.EndsAt), BlockStart: store.UTC(o.BlockStart), BlockEnd: store.UTC(o.BlockEnd),
		HeldUntil: store.UTC(o.HeldUntil), Status: store.OfferHeld, CreatedAt: store.UTC(o.CreatedAt), UpdatedAt: store.UTC(o.CreatedAt)}
	return s.tx(ctx, func(tx *gorm.DB) error {
		if err := s.lockStaff(tx, r.StaffID); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&bookingRow{}).
			Where("staff_id = ? AND "+holding+" AND block_start < ? AND block_end > ?", r.StaffID, r.BlockEnd, r.BlockStart).
			Limit(1).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return store.ErrOverlap
		}
		// Any live offer, the person's own included, keeps the slot.
		held, err := s.heldOver(tx, r.StaffID, "", r.BlockStart, r.BlockEnd, r.CreatedAt)
		if err != nil {
			return err
		}
		if held {
			return store.ErrOverlap
		}
		// A held offer whose time ran out and that nobody lapsed yet must
		// not stand in the exclusion constraint's way.
		if err := tx.Model(&waitlistOfferRow{}).
			Where("staff_id = ? AND status = ? AND held_until <= ? AND block_start < ? AND block_end > ?",
				r.StaffID, store.OfferHeld, r.CreatedAt, r.BlockEnd, r.BlockStart).
			Updates(map[string]any{"status": store.OfferLapsed, "updated_at": r.CreatedAt}).Error; err != nil {
			return err
		}
		if err := tx.Create(&r).Error; err != nil {
			return err
		}
		res := tx.Model(&waitlistEntryRow{}).Where("id = ? AND status = ?", r.EntryID, store.WaitlistWaiting).
			Updates(map[string]any{"status": store.WaitlistOffered, "updated_at": r.CreatedAt})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return store.ErrConflict
		}
		return nil
	})
}

// WasOffered implements store.Waitlist.
func (s *Store) WasOffered(ctx context.Context, entryID, staffID string, start time.Time) (bool, error) {
	var n int64
	err := s.q(ctx).Model(&waitlistOfferRow{}).Where("entry_id = ? AND staff_id = ? AND starts_at = ?", entryID, staffID, store.UTC(start)).
		Limit(1).Count(&n).Error
	return n > 0, translate(err)
}

// GetWaitlistOffer implements store.Waitlist.
func (s *Store) GetWaitlistOffer(ctx context.Context, reference string) (store.WaitlistOffer, error) {
	var r waitlistOfferRow
	if err := s.q(ctx).Take(&r, "reference = ?", reference).Error; err != nil {
		return store.WaitlistOffer{}, translate(err)
	}
	return toOffer(r), nil
}

// UseWaitlistOffer implements store.Waitlist.
func (s *Store) UseWaitlistOffer(ctx context.Context, id, bookingID string, now time.Time) (store.WaitlistOffer, error) {
	var out store.WaitlistOffer
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r waitlistOfferRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		if !toOffer(r).Live(now) {
			return store.ErrConflict
		}
		t := store.UTC(now)
		if err := tx.Model(&waitlistOfferRow{}).Where("id = ?", id).
			Updates(map[string]any{"status": store.OfferUsed, "booking_id": bookingID, "updated_at": t}).Error; err != nil {
			return err
		}
		if err := tx.Model(&waitlistEntryRow{}).Where("id = ?", r.EntryID).
			Updates(map[string]any{"status": store.WaitlistBooked, "updated_at": t}).Error; err != nil {
			return err
		}
		r.Status, r.BookingID, r.UpdatedAt = store.OfferUsed, bookingID, t
		out = toOffer(r)
		return nil
	})
	return out, translate(err)
}

// LapseWaitlistOffers implements store.Waitlist.
func (s *Store) LapseWaitlistOffers(ctx context.Context, now time.Time, limit int) ([]store.WaitlistOffer, error) {
	if limit <= 0 {
		limit = 100
	}
	t := store.UTC(now)
	var out []store.WaitlistOffer
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var rows []waitlistOfferRow
		if err := tx.Raw(`SELECT * FROM waitlist_offers WHERE status = ? AND held_until <= ? ORDER BY held_until, id LIMIT ?`+s.skipLocked(),
			store.OfferHeld, t, limit).Scan(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			if err := tx.Model(&waitlistOfferRow{}).Where("id = ?", r.ID).
				Updates(map[string]any{"status": store.OfferLapsed, "updated_at": t}).Error; err != nil {
				return err
			}
			if err := tx.Model(&waitlistEntryRow{}).Where("id = ? AND status = ?", r.EntryID, store.WaitlistOffered).
				Updates(map[string]any{"status": store.WaitlistWaiting, "updated_at": t}).Error; err != nil {
				return err
			}
			r.Status, r.UpdatedAt = store.OfferLapsed, t
			out = append(out, toOffer(r))
		}
		return nil
	})
	return out, translate(err)
}

// ListHeldOffers implements store.Waitlist.
func (s *Store) ListHeldOffers(ctx context.Context, staffIDs []string, from, to, now time.Time) ([]store.WaitlistOffer, error) {
	if len(staffIDs) == 0 {
		return nil, nil
	}
	var rows []waitlistOfferRow
	err := s.q(ctx).Where("staff_id IN ? AND status = ? AND held_until > ? AND block_start < ? AND block_end > ?",
		staffIDs, store.OfferHeld, store.UTC(now), store.UTC(to), store.UTC(from)).Order("block_start").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.WaitlistOffer, len(rows))
	for i, r := range rows {
		out[i] = toOffer(r)
	}
	return out, nil
}

// LiveOfferOf implements store.Waitlist.
func (s *Store) LiveOfferOf(ctx context.Context, entryID string, now time.Time) (store.WaitlistOffer, error) {
	var r waitlistOfferRow
	err := s.q(ctx).Where("entry_id = ? AND status = ? AND held_until > ?", entryID, store.OfferHeld, store.UTC(now)).
		Order("created_at DESC").Take(&r).Error
	if err != nil {
		return store.WaitlistOffer{}, translate(err)
	}
	return toOffer(r), nil
}

// LeaveWaitlist implements store.Waitlist.
func (s *Store) LeaveWaitlist(ctx context.Context, accountID, reference string, now time.Time) (store.WaitlistEntry, *store.WaitlistOffer, error) {
	var ent store.WaitlistEntry
	var held *store.WaitlistOffer
	t := store.UTC(now)
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r waitlistEntryRow
		if err := lockFor(tx, s.dialect).Take(&r, "reference = ? AND account_id = ?", reference, accountID).Error; err != nil {
			return err
		}
		if r.Status != store.WaitlistWaiting && r.Status != store.WaitlistOffered {
			return store.ErrConflict
		}
		if err := tx.Model(&waitlistEntryRow{}).Where("id = ?", r.ID).
			Updates(map[string]any{"status": store.WaitlistLeft, "updated_at": t}).Error; err != nil {
			return err
		}
		var o waitlistOfferRow
		err := lockFor(tx, s.dialect).Where("entry_id = ? AND status = ?", r.ID, store.OfferHeld).Take(&o).Error
		switch {
		case err == nil:
			if err := tx.Model(&waitlistOfferRow{}).Where("id = ?", o.ID).
				Updates(map[string]any{"status": store.OfferLapsed, "updated_at": t}).Error; err != nil {
				return err
			}
			o.Status, o.UpdatedAt = store.OfferLapsed, t
			off := toOffer(o)
			held = &off
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		r.Status, r.UpdatedAt = store.WaitlistLeft, t
		ent = toEntry(r)
		return nil
	})
	return ent, held, translate(err)
}
