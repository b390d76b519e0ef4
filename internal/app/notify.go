package app

import (
	"context"
	"log/slog"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/feed"
	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/webhook"
)

// Notifications are a server process's share of docs/reference.md §11: the Notifier
// that mutations queue messages with, and the outbox worker that delivers
// them (every server process runs one; start it with go Worker.Run(ctx)).
type Notifications struct {
	Notifier *notify.Notifier
	Worker   *outbox.Worker
	Sealer   *webhook.Sealer // nil without a secret key
	// Calendars syncs connected calendars and writes bookings into them
	// (docs/calendars.md); nil without a secret key, which seals their
	// passwords. The authorization server runs its sync loop.
	Calendars *calendar.Service
}

// NotificationOptions override parts of the configured wiring (tests).
type NotificationOptions struct {
	Clock   store.Clock
	Mail    mail.Sender          // default: from cfg.Mail
	Webhook *webhook.Deliverer   // default: safefetch's rules, loopback in development
	Metrics *prometheus.Registry // nil: no outbox metrics
	Logger  *slog.Logger
}

// AdminService is the admin service of the configuration: webhook secrets
// sealed under LINKSLOT_SECRET_KEY, loopback webhook URLs in development.
// docs fetches client ID metadata documents (nil: production rules).
func AdminService(cfg config.Config, s store.Store, docs *cimd.Resolver) (*admin.Service, error) {
	c := admin.Config{Store: s, Development: !cfg.Production, Documents: docs, SecretKey: cfg.SecretKey}
	if len(cfg.SecretKey) >= 32 {
		sealer, err := webhook.NewSealer(cfg.SecretKey)
		if err != nil {
			return nil, err
		}
		c.Webhooks = sealer
		if c.Feeds, err = feed.New(s, cfg.SecretKey, cfg.Issuer, nil); err != nil {
			return nil, err
		}
		c.Calendars = &calendar.Service{Store: s, Sealer: calendar.NewSealer(cfg.SecretKey), Host: issuerHost(cfg.Issuer),
			Development: !cfg.Production}
		// A sync from the command line offers the time it frees to the
		// waitlist too (no later sync would see it freed); the offers'
		// messages are queued for the servers' outbox workers.
		n, err := notify.New(notify.Options{Issuer: cfg.Issuer, From: cfg.MailFrom, MailOff: cfg.Mail.Kind == mail.KindOff})
		if err != nil {
			return nil, err
		}
		c.Calendars.Freed = SpanFreed(NewMutations(s, booking.NewService(s, nil), nil, n, nil))
		// And so does a calendar disconnected there.
		c.Freed = c.Calendars.Freed
	}
	return admin.New(c)
}

// NewNotifications builds the Notifier and the outbox worker from the
// configuration.
func NewNotifications(cfg config.Config, s store.Store, o NotificationOptions) (*Notifications, error) {
	n, err := notify.New(notify.Options{Issuer: cfg.Issuer, From: cfg.MailFrom, MailOff: cfg.Mail.Kind == mail.KindOff, Clock: o.Clock})
	if err != nil {
		return nil, err
	}
	sender := o.Mail
	if sender == nil {
		from := cfg.MailFrom
		if from == "" {
			from = mail.DefaultFrom(n.Host())
		}
		sender = mail.New(cfg.Mail, mail.Composer{From: from, Host: n.Host()}, cfg.MailDir())
	}
	out := &Notifications{Notifier: n}
	channels := map[string]outbox.Deliverer{}
	// A process with e-mail off takes no e-mail messages: its sender would
	// discard them as sent, and another process (with a real sender) may
	// have queued them.
	// Reminders are checked against the booking at delivery
	// (notify.CheckReminders): a cancelled or moved booking's are not sent.
	if _, off := sender.(mail.Off); !off {
		channels[store.ChannelEmail] = notify.CheckReminders(s, notify.MailDeliverer(sender))
	}
	if len(cfg.SecretKey) >= 32 {
		if out.Sealer, err = webhook.NewSealer(cfg.SecretKey); err != nil {
			return nil, err
		}
		d := o.Webhook
		if d == nil {
			d = &webhook.Deliverer{Development: !cfg.Production}
		}
		d.Endpoints, d.Sealer = s, out.Sealer
		if d.Clock == nil {
			d.Clock = o.Clock
		}
		channels[store.ChannelWebhook] = notify.CheckReminders(s, d)
		out.Calendars = &calendar.Service{Store: s, Sealer: calendar.NewSealer(cfg.SecretKey), Host: n.Host(),
			Development: !cfg.Production, Clock: o.Clock, Logger: o.Logger}
		if o.Metrics != nil {
			out.Calendars.Metrics = calendar.NewMetrics(o.Metrics)
		}
		channels[store.ChannelCalendar] = out.Calendars.Deliverer()
	} else {
		channels[store.ChannelWebhook] = notify.Unavailable("this process has no secret key to sign webhooks with")
	}
	w := &outbox.Worker{Store: s, Channels: channels, Clock: o.Clock, Logger: o.Logger, Lease: cfg.OutboxLease}
	if o.Metrics != nil {
		w.Metrics = outbox.NewMetrics(o.Metrics)
	}
	out.Worker = w
	return out, nil
}

// AccountMailer is the identity service's Mailer on the notifications
// outbox: verification, reset and password-change e-mails are queued in
// the transaction of the change they tell of and delivered by the worker.
func AccountMailer(n *notify.Notifier) identity.Mailer { return accountMailer{n} }

type accountMailer struct{ n *notify.Notifier }

// MailOff tells identity that e-mail is switched off, so sign-up, which
// needs a verification e-mail, is refused before anything is written.
func (a accountMailer) MailOff() bool { return a.n.MailOff() }

func (a accountMailer) QueueMail(ctx context.Context, tx identity.MailTx, m identity.Mail) error {
	queued, err := a.n.QueueEmail(ctx, tx, notify.Email{To: m.To, Topic: m.Topic, Subject: m.Subject, Text: m.Text})
	if err != nil {
		return err
	}
	if !queued {
		// LINKSLOT_SMTP_URL=off: the person could never follow the link.
		return identity.ErrMailUnavailable
	}
	return nil
}

// issuerHost is the issuer's host name: the UIDs of Linkslot's own calendar
// events end with it (notify.Notifier.Host).
func issuerHost(issuer string) string {
	u, err := url.Parse(issuer)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
