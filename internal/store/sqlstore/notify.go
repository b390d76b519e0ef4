package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// The outbox, webhook endpoints and calendar feeds (docs/reference.md §11).

type outboxRow struct {
	ID            string `gorm:"primaryKey"`
	Channel       string
	Topic         string
	Recipient     string
	EndpointID    *string
	BusinessID    string
	BookingID     string
	Payload       []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LeaseOwner    string
	LeaseUntil    *time.Time
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	DeliveredAt   *time.Time
}

func (outboxRow) TableName() string { return "outbox_messages" }

type attemptRow struct {
	MessageID  string `gorm:"primaryKey"`
	Attempt    int    `gorm:"primaryKey"`
	Owner      string
	OK         bool `gorm:"column:ok"`
	StatusCode int
	Error      string
	DurationMs int64
	At         time.Time
}

func (attemptRow) TableName() string { return "delivery_attempts" }

type webhookRow struct {
	ID              string `gorm:"primaryKey"`
	BusinessID      string
	URL             string `gorm:"column:url"`
	Events          string
	SecretEncrypted []byte
	Enabled         bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (webhookRow) TableName() string { return "webhook_endpoints" }

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

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toOutbox(r outboxRow) store.OutboxMessage {
	return store.OutboxMessage{ID: r.ID, Channel: r.Channel, Topic: r.Topic, Recipient: r.Recipient,
		EndpointID: deref(r.EndpointID), BusinessID: r.BusinessID, BookingID: r.BookingID, Payload: r.Payload,
		Status: r.Status, Attempts: r.Attempts, NextAttemptAt: store.UTC(r.NextAttemptAt), LeaseOwner: r.LeaseOwner,
		LeaseUntil: utcPtr(r.LeaseUntil), LastError: r.LastError, CreatedAt: store.UTC(r.CreatedAt),
		UpdatedAt: store.UTC(r.UpdatedAt), DeliveredAt: utcPtr(r.DeliveredAt)}
}

// EnqueueMessages inserts queued messages.
func (s *Store) EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error {
	if len(ms) == 0 {
		return nil
	}
	rows := make([]outboxRow, len(ms))
	for i, m := range ms {
		if m.Status == "" {
			m.Status = store.OutboxQueued
		}
		now := store.UTC(m.CreatedAt)
		next := store.UTC(m.NextAttemptAt)
		if next.IsZero() {
			next = now
		}
		rows[i] = outboxRow{ID: m.ID, Channel: m.Channel, Topic: m.Topic, Recipient: m.Recipient,
			EndpointID: nullable(m.EndpointID), BusinessID: m.BusinessID, BookingID: m.BookingID, Payload: m.Payload,
			Status: m.Status, NextAttemptAt: next, CreatedAt: now, UpdatedAt: now}
	}
	return s.create(ctx, &rows)
}

// LeaseMessages leases due messages; see store.Outbox.
func (s *Store) LeaseMessages(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, channels ...string) ([]store.OutboxMessage, error) {
	if limit <= 0 {
		limit = 10
	}
	now = store.UTC(now)
	until := store.UTC(now.Add(lease))
	// PostgreSQL: rows another worker is leasing right now are skipped,
	// not waited for. SQLite: the statement holds the database write lock,
	// so two workers never pick the same row.
	lock := ""
	if s.dialect == "postgres" {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	only, args := "", []any{owner, until, now, now, now}
	if len(channels) > 0 {
		only, args = " AND channel IN ?", append(args, channels)
	}
	args = append(args, limit)
	var rows []outboxRow
	err := s.q(ctx).Raw(`UPDATE outbox_messages
SET lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?
WHERE id IN (SELECT id FROM outbox_messages
             WHERE status = 'queued' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)`+only+`
             ORDER BY next_attempt_at LIMIT ?`+lock+`)
RETURNING *`, args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.OutboxMessage, len(rows))
	for i, r := range rows {
		out[i] = toOutbox(r)
	}
	return out, nil
}

// FinishAttempt records an attempt and its outcome; see store.Outbox. The
// attempt row and the outcome commit together, so a process that dies in
// between leaves neither and its lease runs out as for any other crash; a
// lost lease still commits the attempt row and answers ErrConflict.
func (s *Store) FinishAttempt(ctx context.Context, owner string, a store.DeliveryAttempt, retryAt time.Time) error {
	at := store.UTC(a.At)
	errText := clipText(a.Error, 1000)
	lost := false
	// One transaction, no savepoint: a failed insert fails the whole call.
	err := s.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&attemptRow{MessageID: a.MessageID, Attempt: a.Attempt, Owner: owner, OK: a.OK,
			StatusCode: a.StatusCode, Error: errText, DurationMs: a.Duration.Milliseconds(), At: at}).Error; err != nil {
			return err
		}
		set := map[string]any{"lease_owner": "", "lease_until": nil, "updated_at": at}
		switch {
		case a.OK:
			set["status"], set["delivered_at"], set["last_error"] = store.OutboxDelivered, at, ""
		case !retryAt.IsZero():
			set["next_attempt_at"], set["last_error"] = store.UTC(retryAt), errText
		default:
			set["status"], set["last_error"] = store.OutboxFailed, errText
		}
		res := tx.Model(&outboxRow{}).
			Where("id = ? AND lease_owner = ? AND attempts = ? AND status = ?", a.MessageID, owner, a.Attempt, store.OutboxQueued).
			Updates(set)
		if res.Error != nil {
			return res.Error
		}
		lost = res.RowsAffected == 0
		return nil
	})
	if err != nil {
		return err
	}
	if lost {
		return store.ErrConflict
	}
	return nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// GetMessage returns an outbox message.
func (s *Store) GetMessage(ctx context.Context, id string) (store.OutboxMessage, error) {
	var r outboxRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.OutboxMessage{}, translate(err)
	}
	return toOutbox(r), nil
}

// ListMessages returns messages newest first.
func (s *Store) ListMessages(ctx context.Context, f store.OutboxFilter) ([]store.OutboxMessage, error) {
	q := s.q(ctx).Model(&outboxRow{})
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.EndpointID != "" {
		q = q.Where("endpoint_id = ?", f.EndpointID)
	}
	if f.Channel != "" {
		q = q.Where("channel = ?", f.Channel)
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	var rows []outboxRow
	if err := q.Order("created_at DESC, id").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.OutboxMessage, len(rows))
	for i, r := range rows {
		out[i] = toOutbox(r)
	}
	return out, nil
}

// ListAttempts implements store.Outbox.
func (s *Store) ListAttempts(ctx context.Context, messageIDs ...string) ([]store.DeliveryAttempt, error) {
	if len(messageIDs) == 0 {
		return []store.DeliveryAttempt{}, nil
	}
	var rows []attemptRow
	if err := s.q(ctx).Where("message_id IN ?", messageIDs).Order("message_id, attempt").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.DeliveryAttempt, len(rows))
	for i, r := range rows {
		out[i] = store.DeliveryAttempt{MessageID: r.MessageID, Attempt: r.Attempt, Owner: r.Owner, OK: r.OK,
			StatusCode: r.StatusCode, Error: r.Error, Duration: time.Duration(r.DurationMs) * time.Millisecond, At: store.UTC(r.At)}
	}
	return out, nil
}

// ReplayMessage queues a message again; see store.Outbox.
func (s *Store) ReplayMessage(ctx context.Context, id string, now time.Time) (store.OutboxMessage, error) {
	now = store.UTC(now)
	res := s.q(ctx).Model(&outboxRow{}).
		Where("id = ? AND status <> ? AND (lease_until IS NULL OR lease_until <= ?)", id, store.OutboxDelivered, now).
		Updates(map[string]any{"status": store.OutboxQueued,
			"next_attempt_at": now, "lease_owner": "", "lease_until": nil, "updated_at": now})
	if res.Error != nil {
		return store.OutboxMessage{}, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		if _, err := s.GetMessage(ctx, id); err != nil {
			return store.OutboxMessage{}, err
		}
		return store.OutboxMessage{}, store.ErrConflict
	}
	return s.GetMessage(ctx, id)
}

// CountUndelivered implements store.Outbox: a range of
// outbox_messages_status_channel per status, so it reads the undelivered
// messages only, whatever the number of delivered ones the retention
// keeps, and from the index alone, which holds each one's channel.
func (s *Store) CountUndelivered(ctx context.Context) ([]store.OutboxCount, error) {
	var rows []struct {
		Channel, Status string
		N               int64
	}
	if err := s.q(ctx).Model(&outboxRow{}).Select("channel, status, count(*) AS n").
		Where("status IN ?", []string{store.OutboxQueued, store.OutboxFailed}).Group("channel, status").
		Scan(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.OutboxCount, len(rows))
	for i, r := range rows {
		out[i] = store.OutboxCount{Channel: r.Channel, Status: r.Status, N: r.N}
	}
	return out, nil
}

func toWebhook(r webhookRow) store.WebhookEndpoint {
	ev := []string{}
	for _, e := range strings.Split(r.Events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			ev = append(ev, e)
		}
	}
	return store.WebhookEndpoint{ID: r.ID, BusinessID: r.BusinessID, URL: r.URL, Events: ev,
		SecretEncrypted: r.SecretEncrypted, Enabled: r.Enabled, CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

func fromWebhook(e store.WebhookEndpoint) webhookRow {
	return webhookRow{ID: e.ID, BusinessID: e.BusinessID, URL: e.URL, Events: strings.Join(e.Events, ","),
		SecretEncrypted: e.SecretEncrypted, Enabled: e.Enabled, CreatedAt: store.UTC(e.CreatedAt), UpdatedAt: store.UTC(e.UpdatedAt)}
}

// CreateWebhookEndpoint inserts an endpoint.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e store.WebhookEndpoint) error {
	return s.create(ctx, ptr(fromWebhook(e)))
}

// GetWebhookEndpoint returns an endpoint.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (store.WebhookEndpoint, error) {
	var r webhookRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.WebhookEndpoint{}, translate(err)
	}
	return toWebhook(r), nil
}

// ListWebhookEndpoints lists endpoints, oldest first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, businessID string) ([]store.WebhookEndpoint, error) {
	q := s.q(ctx).Model(&webhookRow{})
	if businessID != "" {
		q = q.Where("business_id = ?", businessID)
	}
	var rows []webhookRow
	if err := q.Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.WebhookEndpoint, len(rows))
	for i, r := range rows {
		out[i] = toWebhook(r)
	}
	return out, nil
}

// UpdateWebhookEndpoint applies fn to the current endpoint in one transaction.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, id string, fn func(store.WebhookEndpoint) (store.WebhookEndpoint, error)) (store.WebhookEndpoint, error) {
	var out store.WebhookEndpoint
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r webhookRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		old := toWebhook(r)
		e, err := fn(old)
		if err != nil {
			return err
		}
		e.ID, e.BusinessID, e.CreatedAt, e.UpdatedAt = id, old.BusinessID, old.CreatedAt, store.SystemClock()
		if err := tx.Save(ptr(fromWebhook(e))).Error; err != nil {
			return err
		}
		out = e
		return nil
	})
	return out, err
}

// DeleteWebhookEndpoint deletes an endpoint and its messages.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	res := s.q(ctx).Delete(&webhookRow{}, "id = ?", id)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

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
		q = q.Where("business_id = ? AND staff_id = ?", f.BusinessID, f.StaffID)
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
	out := make([]store.Booking, len(rows))
	for i, r := range rows {
		out[i] = toBooking(r)
	}
	return out, nil
}
