package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// The outbox: messages enqueued, leased, attempted and replayed (docs/reference.md §11).

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
