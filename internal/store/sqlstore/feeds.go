package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// Calendar feeds and the bookings they list (docs/reference.md §11).

type feedRow struct {
	ID         string `gorm:"primaryKey"`
	Kind       string
	AccountID  *string
	BusinessID *string
	StaffID    *string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

func (feedRow) TableName() string { return "calendar_feeds" }

func toFeed(r feedRow) store.CalendarFeed {
	return store.CalendarFeed{ID: r.ID, Kind: r.Kind, AccountID: deref(r.AccountID), BusinessID: deref(r.BusinessID),
		StaffID: deref(r.StaffID), CreatedAt: store.UTC(r.CreatedAt), RevokedAt: utcPtr(r.RevokedAt)}
}

// CreateCalendarFeed inserts a feed.
func (s *Store) CreateCalendarFeed(ctx context.Context, f store.CalendarFeed) error {
	return s.create(ctx, &feedRow{ID: f.ID, Kind: f.Kind, AccountID: nullable(f.AccountID), BusinessID: nullable(f.BusinessID),
		StaffID: nullable(f.StaffID), CreatedAt: store.UTC(f.CreatedAt), RevokedAt: utcPtr(f.RevokedAt)})
}

// GetCalendarFeed returns a feed, revoked or not.
func (s *Store) GetCalendarFeed(ctx context.Context, id string) (store.CalendarFeed, error) {
	var r feedRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.CalendarFeed{}, translate(err)
	}
	return toFeed(r), nil
}

func (s *Store) feedOwner(q *gorm.DB, kind, ownerID, staffID string) *gorm.DB {
	q = q.Where("kind = ? AND revoked_at IS NULL", kind)
	switch kind {
	case store.FeedAccount:
		return q.Where("account_id = ?", ownerID)
	case store.FeedStaff:
		return q.Where("business_id = ? AND staff_id = ?", ownerID, staffID)
	}
	return q.Where("business_id = ? AND staff_id IS NULL", ownerID)
}

// ActiveCalendarFeed returns the newest active feed of an owner.
func (s *Store) ActiveCalendarFeed(ctx context.Context, kind, ownerID, staffID string) (store.CalendarFeed, error) {
	var r feedRow
	if err := s.feedOwner(s.q(ctx).Model(&feedRow{}), kind, ownerID, staffID).Order("created_at DESC").Take(&r).Error; err != nil {
		return store.CalendarFeed{}, translate(err)
	}
	return toFeed(r), nil
}

// RevokeCalendarFeeds revokes every active feed of an owner.
func (s *Store) RevokeCalendarFeeds(ctx context.Context, kind, ownerID, staffID string, now time.Time) error {
	return translate(s.feedOwner(s.q(ctx).Model(&feedRow{}), kind, ownerID, staffID).
		Update("revoked_at", store.UTC(now)).Error)
}

// ListFeedBookings returns the bookings of a feed by start time.
func (s *Store) ListFeedBookings(ctx context.Context, f store.FeedBookingFilter) ([]store.Booking, error) {
	q := s.q(ctx).Model(&bookingRow{}).Where("starts_at >= ?", store.UTC(f.Since))
	switch {
	case f.AccountID != "":
		q = q.Where("account_id = ?", f.AccountID)
	case f.StaffID != "":
		// By the staff member alone, so that bookings_staff answers in
		// its order (a staff member's bookings are all of its business);
		// the business is checked below.
		q = q.Where("staff_id = ?", f.StaffID)
	default:
		q = q.Where("business_id = ?", f.BusinessID)
	}
	if f.Limit <= 0 || f.Limit > 5000 {
		f.Limit = 1000
	}
	var rows []bookingRow
	if err := q.Order("starts_at, id").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Booking, 0, len(rows))
	for _, r := range rows {
		if f.AccountID == "" && f.StaffID != "" && f.BusinessID != "" && r.BusinessID != f.BusinessID {
			continue
		}
		out = append(out, toBooking(r))
	}
	return out, nil
}
