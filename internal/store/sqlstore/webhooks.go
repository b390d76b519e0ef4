package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// Webhook endpoints (docs/reference.md §11).

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
