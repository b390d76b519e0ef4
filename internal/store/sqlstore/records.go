package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

func toIdem(r idempotencyRow) store.IdempotencyRecord {
	return store.IdempotencyRecord{LinkID: r.LinkID, Tool: r.Tool, Key: r.Key, ArgsHash: r.ArgsHash, State: r.State,
		Response: r.Response, CreatedAt: store.UTC(r.CreatedAt), ExpiresAt: store.UTC(r.ExpiresAt)}
}

// ClaimIdempotency inserts a pending record, or returns the existing one with
// ErrAlreadyExists. It never aborts an enclosing transaction.
func (s *Store) ClaimIdempotency(ctx context.Context, rec store.IdempotencyRecord) (store.IdempotencyRecord, error) {
	if rec.State == "" {
		rec.State = store.IdemPending
	}
	r := idempotencyRow{LinkID: rec.LinkID, Tool: rec.Tool, Key: rec.Key, ArgsHash: rec.ArgsHash, State: rec.State,
		Response: rec.Response, CreatedAt: store.UTC(rec.CreatedAt), ExpiresAt: store.UTC(rec.ExpiresAt)}
	res := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
	if res.Error != nil {
		return store.IdempotencyRecord{}, translate(res.Error)
	}
	if res.RowsAffected == 1 {
		return toIdem(r), nil
	}
	existing, err := s.GetIdempotency(ctx, rec.LinkID, rec.Tool, rec.Key)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	return existing, store.ErrAlreadyExists
}

// GetIdempotency returns a record.
func (s *Store) GetIdempotency(ctx context.Context, linkID, tool, key string) (store.IdempotencyRecord, error) {
	var r idempotencyRow
	if err := s.q(ctx).Take(&r, "link_id = ? AND tool = ? AND key = ?", linkID, tool, key).Error; err != nil {
		return store.IdempotencyRecord{}, translate(err)
	}
	return toIdem(r), nil
}

// CompleteIdempotency stores the answer of a pending record.
func (s *Store) CompleteIdempotency(ctx context.Context, linkID, tool, key string, response []byte) error {
	res := s.q(ctx).Model(&idempotencyRow{}).Where("link_id = ? AND tool = ? AND key = ?", linkID, tool, key).
		Updates(map[string]any{"state": store.IdemDone, "response": response})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ReleaseIdempotency deletes a pending record.
func (s *Store) ReleaseIdempotency(ctx context.Context, linkID, tool, key string) error {
	return translate(s.q(ctx).Delete(&idempotencyRow{}, "link_id = ? AND tool = ? AND key = ? AND state = ?",
		linkID, tool, key, store.IdemPending).Error)
}

// PurgeIdempotency deletes records that expired before t.
func (s *Store) PurgeIdempotency(ctx context.Context, before time.Time) (int64, error) {
	res := s.q(ctx).Delete(&idempotencyRow{}, "expires_at < ?", store.UTC(before))
	return res.RowsAffected, translate(res.Error)
}

// AddActivity records a confirmed mutation.
func (s *Store) AddActivity(ctx context.Context, a store.Activity) error {
	if a.ID == "" {
		a.ID = store.NewID("act")
	}
	if a.Via == "" {
		a.Via = store.ViaAgent
	}
	r := activityRow{ID: a.ID, AccountID: a.AccountID, LinkID: a.LinkID, ClientID: a.ClientID, Via: a.Via, Actor: a.Actor, Tool: a.Tool,
		Arguments: string(a.Arguments), Summary: a.Summary, ConfirmationText: a.ConfirmationText,
		IdempotencyKey: a.IdempotencyKey, Outcome: string(a.Outcome), RequestID: a.RequestID, CreatedAt: store.UTC(a.CreatedAt)}
	return s.create(ctx, &r)
}

// ListActivity returns up to limit+1 entries, newest first.
func (s *Store) ListActivity(ctx context.Context, accountID string, limit, offset int) ([]store.Activity, error) {
	var rows []activityRow
	if limit <= 0 {
		limit = 20
	}
	err := s.q(ctx).Where("account_id = ?", accountID).Order("created_at DESC, id DESC").
		Limit(limit + 1).Offset(max(offset, 0)).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]store.Activity, len(rows))
	for i, r := range rows {
		out[i] = store.Activity{ID: r.ID, AccountID: r.AccountID, LinkID: r.LinkID, ClientID: r.ClientID, Via: r.Via, Actor: r.Actor, Tool: r.Tool,
			Arguments: []byte(r.Arguments), Summary: r.Summary, ConfirmationText: r.ConfirmationText,
			IdempotencyKey: r.IdempotencyKey, Outcome: []byte(r.Outcome), RequestID: r.RequestID, CreatedAt: store.UTC(r.CreatedAt)}
	}
	return out, nil
}

// AddAuditEvent records an administrative action.
func (s *Store) AddAuditEvent(ctx context.Context, e store.AuditEvent) error {
	if e.ID == "" {
		e.ID = store.NewID("aud")
	}
	r := auditRow{ID: e.ID, ActorID: e.ActorID, Action: e.Action, Target: e.Target, Before: string(e.Before),
		After: string(e.After), RequestID: e.RequestID, ClientAddr: e.ClientAddr, CreatedAt: store.UTC(e.CreatedAt)}
	return s.create(ctx, &r)
}

// ListAuditEvents returns up to limit+1 events, newest first.
func (s *Store) ListAuditEvents(ctx context.Context, limit, offset int) ([]store.AuditEvent, error) {
	var rows []auditRow
	if limit <= 0 {
		limit = 50
	}
	if err := s.q(ctx).Order("created_at DESC, id DESC").Limit(limit + 1).Offset(max(offset, 0)).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.AuditEvent, len(rows))
	for i, r := range rows {
		out[i] = store.AuditEvent{ID: r.ID, ActorID: r.ActorID, Action: r.Action, Target: r.Target, Before: []byte(r.Before),
			After: []byte(r.After), RequestID: r.RequestID, ClientAddr: r.ClientAddr, CreatedAt: store.UTC(r.CreatedAt)}
	}
	return out, nil
}
