package admin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/webhook"
)

// ---- webhooks (docs/reference.md §11) ----

// WebhookInfo is an endpoint as administrators see it: everything but the
// secret.
type WebhookInfo struct {
	ID        string    `json:"id"`
	Business  string    `json:"business"` // the business reference
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CreatedWebhook is an endpoint with its secret, shown once.
type CreatedWebhook struct {
	WebhookInfo
	Secret string `json:"secret"`
}

// DeliveryInfo is one outbox message with its attempts (a webhook delivery
// or an e-mail). Its ID is the webhook-id.
type DeliveryInfo struct {
	ID          string         `json:"id"`
	Channel     string         `json:"channel"`
	Topic       string         `json:"type"`
	EndpointID  string         `json:"endpoint_id,omitempty"`
	Recipient   string         `json:"recipient,omitempty"`
	Status      string         `json:"status"`
	Attempts    int            `json:"attempts"`
	NextAttempt *time.Time     `json:"next_attempt_at,omitempty"`
	LastError   string         `json:"last_error,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	DeliveredAt *time.Time     `json:"delivered_at,omitempty"`
	Log         []AttemptEntry `json:"log,omitempty"`
}

// AttemptEntry is one delivery attempt.
type AttemptEntry struct {
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	OK         bool      `json:"ok"`
	StatusCode int       `json:"status_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMs int64     `json:"duration_ms"`
}

func webhookInfo(e store.WebhookEndpoint, businessRef string) WebhookInfo {
	return WebhookInfo{ID: e.ID, Business: businessRef, URL: e.URL, Events: nonNil(e.Events), Enabled: e.Enabled,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func deliveryInfo(m store.OutboxMessage, log []store.DeliveryAttempt) DeliveryInfo {
	d := DeliveryInfo{ID: m.ID, Channel: m.Channel, Topic: m.Topic, EndpointID: m.EndpointID, Recipient: m.Recipient,
		Status: m.Status, Attempts: m.Attempts, LastError: m.LastError, CreatedAt: m.CreatedAt, DeliveredAt: m.DeliveredAt}
	if m.Status == store.OutboxQueued {
		next := m.NextAttemptAt
		d.NextAttempt = &next
	}
	for _, a := range log {
		d.Log = append(d.Log, AttemptEntry{Attempt: a.Attempt, At: a.At, OK: a.OK, StatusCode: a.StatusCode, Error: a.Error,
			DurationMs: a.Duration.Milliseconds()})
	}
	return d
}

// checkEvents validates an endpoint's event list; empty means all.
func checkEvents(events []string) ([]string, error) {
	events = clean(events)
	if len(events) == 0 {
		return slices.Clone(notify.Events), nil
	}
	for _, e := range events {
		if !slices.Contains(notify.Events, e) {
			return nil, invalid("events", "unknown event "+quote(e)+" (known: "+strings.Join(notify.Events, ", ")+")")
		}
	}
	slices.Sort(events)
	return slices.Compact(events), nil
}

func quote(s string) string { return `"` + s + `"` }

// checkWebhookURL applies the fetch address rules of docs/reference.md §10 to a URL:
// https with a host, or in development http to localhost or a loopback
// address. Addresses are checked again on every delivery.
func (s *Service) checkWebhookURL(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return invalid("url", "the endpoint URL is required")
	}
	if len(raw) > 2000 {
		return invalid("url", "the endpoint URL is longer than 2000 characters")
	}
	u, err := safefetch.CheckURL(raw, s.development)
	if err != nil {
		msg := "must be an https URL"
		if s.development {
			msg += " (or http to localhost or a loopback address in development)"
		}
		return invalid("url", msg)
	}
	// What the URL names literally is refused now, not at delivery
	// (docs/reference.md §11): a bad port, an address no delivery may reach.
	if err := safefetch.CheckTarget(u, safefetch.Rules{AllowLoopback: s.development}); err != nil {
		var fe *safefetch.Error
		if errors.As(err, &fe) && fe.Reason == safefetch.ReasonAddress {
			return invalid("url", "the endpoint URL's "+fe.Detail+", which deliveries never reach; give a public host name or address")
		}
		detail := "an invalid port"
		if errors.As(err, &fe) {
			detail = fe.Detail
		}
		return invalid("url", "the endpoint URL has "+detail+"; give a port between 1 and 65535, or none for 443")
	}
	return nil
}

func (s *Service) businessRefs(ctx context.Context) (map[string]string, error) {
	bs, err := s.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	refs := make(map[string]string, len(bs))
	for _, b := range bs {
		refs[b.ID] = b.Reference
	}
	return refs, nil
}

var errNoSealer = errors.New("webhooks need LINKSLOT_SECRET_KEY to seal their secrets")

// CreateWebhook registers an endpoint for a business and returns it with
// its secret, which is shown only this once.
func (s *Service) CreateWebhook(ctx context.Context, a Actor, businessRef, rawURL string, events []string) (CreatedWebhook, error) {
	if s.sealer == nil {
		return CreatedWebhook{}, errNoSealer
	}
	if err := s.checkWebhookURL(rawURL); err != nil {
		return CreatedWebhook{}, err
	}
	ev, err := checkEvents(events)
	if err != nil {
		return CreatedWebhook{}, err
	}
	biz, err := s.store.GetBusiness(ctx, strings.TrimSpace(businessRef))
	if err != nil {
		return CreatedWebhook{}, translate(err, "business "+businessRef)
	}
	now := s.now()
	secret := webhook.NewSecret()
	e := store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: biz.ID, URL: strings.TrimSpace(rawURL), Events: ev,
		Enabled: true, CreatedAt: now, UpdatedAt: now}
	e.SecretEncrypted = s.sealer.Seal(e.ID, secret)
	info := webhookInfo(e, biz.Reference)
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.CreateWebhookEndpoint(ctx, e); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "webhook.create", e.ID, nil, info)
	})
	if err != nil {
		return CreatedWebhook{}, translate(err, "webhook endpoint")
	}
	return CreatedWebhook{WebhookInfo: info, Secret: secret}, nil
}

// ListWebhooks lists the endpoints of a business, or of every business
// when businessRef is empty.
func (s *Service) ListWebhooks(ctx context.Context, businessRef string) ([]WebhookInfo, error) {
	refs, err := s.businessRefs(ctx)
	if err != nil {
		return nil, err
	}
	id := ""
	if businessRef = strings.TrimSpace(businessRef); businessRef != "" {
		b, err := s.store.GetBusiness(ctx, businessRef)
		if err != nil {
			return nil, translate(err, "business "+businessRef)
		}
		id = b.ID
	}
	eps, err := s.store.ListWebhookEndpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]WebhookInfo, len(eps))
	for i, e := range eps {
		out[i] = webhookInfo(e, refs[e.BusinessID])
	}
	return out, nil
}

// GetWebhook returns one endpoint.
func (s *Service) GetWebhook(ctx context.Context, id string) (WebhookInfo, error) {
	e, err := s.store.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return WebhookInfo{}, translate(err, "webhook endpoint "+id)
	}
	refs, err := s.businessRefs(ctx)
	if err != nil {
		return WebhookInfo{}, err
	}
	return webhookInfo(e, refs[e.BusinessID]), nil
}

func (s *Service) updateWebhook(ctx context.Context, a Actor, id, action string, fn func(store.WebhookEndpoint) (store.WebhookEndpoint, error)) (WebhookInfo, error) {
	refs, err := s.businessRefs(ctx)
	if err != nil {
		return WebhookInfo{}, err
	}
	var out WebhookInfo
	err = s.inTx(ctx, func(tx Tx) error {
		var before WebhookInfo
		e, err := tx.UpdateWebhookEndpoint(ctx, id, func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
			before = webhookInfo(e, refs[e.BusinessID])
			return fn(e)
		})
		if err != nil {
			return err
		}
		out = webhookInfo(e, refs[e.BusinessID])
		return s.audit(ctx, tx, a, action, id, before, out)
	})
	return out, translate(err, "webhook endpoint "+id)
}

// WebhookPatch changes an endpoint: nil fields are left as they are.
type WebhookPatch struct {
	URL    *string
	Events *[]string // empty: every event
}

// UpdateWebhook changes an endpoint's URL or events, checked as at
// creation; its secret and state stay. Pending deliveries go to the new
// URL.
func (s *Service) UpdateWebhook(ctx context.Context, a Actor, id string, p WebhookPatch) (WebhookInfo, error) {
	var url string
	if p.URL != nil {
		if err := s.checkWebhookURL(*p.URL); err != nil {
			return WebhookInfo{}, err
		}
		url = strings.TrimSpace(*p.URL)
	}
	var events []string
	if p.Events != nil {
		var err error
		if events, err = checkEvents(*p.Events); err != nil {
			return WebhookInfo{}, err
		}
	}
	return s.updateWebhook(ctx, a, id, "webhook.update", func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
		if p.URL != nil {
			e.URL = url
		}
		if p.Events != nil {
			e.Events = events
		}
		return e, nil
	})
}

// SetWebhookEnabled enables or disables an endpoint. A disabled endpoint
// gets no new events, and its pending deliveries fail (replayable).
func (s *Service) SetWebhookEnabled(ctx context.Context, a Actor, id string, enabled bool) (WebhookInfo, error) {
	action := "webhook.disable"
	if enabled {
		action = "webhook.enable"
	}
	return s.updateWebhook(ctx, a, id, action, func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
		e.Enabled = enabled
		return e, nil
	})
}

// RotateWebhookSecret gives an endpoint a new secret, shown once; pending
// and later deliveries are signed with it.
func (s *Service) RotateWebhookSecret(ctx context.Context, a Actor, id string) (CreatedWebhook, error) {
	if s.sealer == nil {
		return CreatedWebhook{}, errNoSealer
	}
	secret := webhook.NewSecret()
	info, err := s.updateWebhook(ctx, a, id, "webhook.rotate_secret", func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
		e.SecretEncrypted = s.sealer.Seal(e.ID, secret)
		return e, nil
	})
	if err != nil {
		return CreatedWebhook{}, err
	}
	return CreatedWebhook{WebhookInfo: info, Secret: secret}, nil
}

// DeleteWebhook deletes an endpoint and its delivery log.
func (s *Service) DeleteWebhook(ctx context.Context, a Actor, id string) error {
	before, err := s.GetWebhook(ctx, id)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		if err := tx.DeleteWebhookEndpoint(ctx, id); err != nil {
			return err
		}
		return s.audit(ctx, tx, a, "webhook.delete", id, before, nil)
	})
	return translate(err, "webhook endpoint "+id)
}

// WebhookDeliveries is an endpoint's delivery log, newest first, each with
// its attempts.
func (s *Service) WebhookDeliveries(ctx context.Context, id string, limit int) ([]DeliveryInfo, error) {
	if _, err := s.store.GetWebhookEndpoint(ctx, id); err != nil {
		return nil, translate(err, "webhook endpoint "+id)
	}
	return s.deliveries(ctx, store.OutboxFilter{EndpointID: id, Limit: limit})
}

// ListDeliveries lists outbox messages (e-mail and webhook) with a status
// ("failed" for the ones waiting for a replay; empty: any), newest first.
func (s *Service) ListDeliveries(ctx context.Context, status, channel string, limit int) ([]DeliveryInfo, error) {
	switch status {
	case "", store.OutboxQueued, store.OutboxDelivered, store.OutboxFailed:
	default:
		return nil, invalid("status", "must be queued, delivered or failed")
	}
	switch channel {
	case "", store.ChannelEmail, store.ChannelWebhook:
	default:
		return nil, invalid("channel", "must be email or webhook")
	}
	return s.deliveries(ctx, store.OutboxFilter{Status: status, Channel: channel, Limit: limit})
}

func (s *Service) deliveries(ctx context.Context, f store.OutboxFilter) ([]DeliveryInfo, error) {
	ms, err := s.store.ListMessages(ctx, f)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	// Every listed message's attempts in one statement, not one each.
	atts, err := s.store.ListAttempts(ctx, ids...)
	if err != nil {
		return nil, err
	}
	byMsg := map[string][]store.DeliveryAttempt{}
	for _, a := range atts {
		byMsg[a.MessageID] = append(byMsg[a.MessageID], a)
	}
	out := make([]DeliveryInfo, len(ms))
	for i, m := range ms {
		out[i] = deliveryInfo(m, byMsg[m.ID])
	}
	return out, nil
}

// ReplayDelivery queues a delivery again now, with its original id (the
// same webhook-id): a failed one, or one waiting for its next retry. A
// delivered message, or one a worker is delivering right now, answers
// ErrConflict: replaying it would send it twice.
func (s *Service) ReplayDelivery(ctx context.Context, a Actor, id string) (DeliveryInfo, error) {
	var out DeliveryInfo
	id = strings.TrimSpace(id)
	err := s.inTx(ctx, func(tx Tx) error {
		m, err := tx.ReplayMessage(ctx, id, s.now())
		if errors.Is(err, store.ErrConflict) {
			if cur, gerr := tx.GetMessage(ctx, id); gerr == nil && cur.Status == store.OutboxDelivered {
				return ErrConflict.WithMessage("delivery %s was delivered already; there is nothing to replay", id)
			}
			return ErrConflict.WithMessage("delivery %s is being delivered right now; wait for its outcome", id)
		}
		if err != nil {
			return err
		}
		out = deliveryInfo(m, nil)
		return s.audit(ctx, tx, a, "delivery.replay", m.ID, nil, map[string]string{"channel": m.Channel, "type": m.Topic})
	})
	return out, translate(err, "delivery "+id)
}

// FeedURL returns the private calendar feed URL of a business, or of one of
// its staff members (staffRef not empty): the same URL every time, or a new
// one that revokes the old when replace is set (docs/reference.md §11).
func (s *Service) FeedURL(ctx context.Context, a Actor, businessRef, staffRef string, replace bool) (string, error) {
	if s.feeds == nil {
		return "", errors.New("calendar feeds need LINKSLOT_SECRET_KEY")
	}
	businessRef, staffRef = strings.TrimSpace(businessRef), strings.TrimSpace(staffRef)
	if businessRef == "" {
		return "", invalid("business", "the business reference is required")
	}
	u, err := s.feeds.BusinessFeed(ctx, businessRef, staffRef, replace)
	if err != nil {
		return "", translate(err, "business "+businessRef+" "+staffRef)
	}
	if replace {
		target := businessRef
		if staffRef != "" {
			target += "/" + staffRef
		}
		if err := s.inTx(ctx, func(tx Tx) error {
			return s.audit(ctx, tx, a, "catalog.feed_replace", target, nil, nil)
		}); err != nil {
			return "", err
		}
	}
	return u, nil
}
