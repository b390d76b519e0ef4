// Package notify decides who hears of a change and writes their messages
// into the transactional outbox (docs/reference.md §11); internal/outbox delivers
// them.
//
// Every executed booking mutation calls Notifier.BookingChanged inside its
// own transaction, with the booking as written and the facts its summary was
// rendered from. It queues:
//
//   - an e-mail to the person (unless e-mail is off), with a calendar
//     invitation;
//   - an e-mail to the business's contact_email, when it has one, with the
//     same invitation;
//   - one webhook event per enabled endpoint of the business subscribed to
//     the event type.
//
// and answers what it queued, which the mutation returns as `notified`:
// {"person": "queued"|"off", "business": "queued"|"none", "webhooks": N}.
// Because the messages commit or roll back with the booking, a message
// exists exactly when the change does.
//
// E-mails are composed when they are queued, from the facts of the change:
// a retried delivery sends the same message, and a later change of the
// catalog does not rewrite what a person was told. Times are shown in the
// business's time zone with its name, as in the confirmed summary. Other
// parts of Linkslot send their own e-mails (verification, password reset)
// through QueueEmail.
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/ical"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/store"
)

// Booking event types (webhook `type`, outbox topic).
const (
	EventCreated     = "booking.created"
	EventRescheduled = "booking.rescheduled"
	EventCancelled   = "booking.cancelled"
	// The business's answers (docs/reference.md "Bookings the business
	// answers"): a booking waiting for it, confirmed, declined (by the
	// business or because it did not answer in time), and after the
	// appointment, completed or a no-show.
	EventPending   = "booking.pending"
	EventConfirmed = "booking.confirmed"
	EventDeclined  = "booking.declined"
	EventCompleted = "booking.completed"
	EventNoShow    = "booking.no_show"
)

// Events of callback requests and the waitlist (docs/reference.md §16).
const (
	EventCallbackRequested = "callback.requested"
	EventWaitlistOffered   = "waitlist.offered"
)

// Events lists every event type, the default of a webhook endpoint.
var Events = []string{EventCreated, EventRescheduled, EventCancelled, EventPending, EventConfirmed, EventDeclined,
	EventCompleted, EventNoShow, EventCallbackRequested, EventWaitlistOffered, EventReminder}

// EventFor maps a booking engine action (create, reschedule, cancel) to its
// event type.
func EventFor(action string) string {
	switch action {
	case "create":
		return EventCreated
	case "reschedule":
		return EventRescheduled
	case "cancel":
		return EventCancelled
	case booking.BusinessConfirm:
		return EventConfirmed
	case booking.BusinessDecline:
		return EventDeclined
	case booking.BusinessComplete:
		return EventCompleted
	case booking.BusinessNoShow:
		return EventNoShow
	}
	return ""
}

// eventOf is the event type of a change: a create that waits for the
// business is booking.pending.
func eventOf(f booking.Facts, b store.Booking) string {
	if f.Action == "create" && b.Status == store.BookingPending {
		return EventPending
	}
	return EventFor(f.Action)
}

// mailsPerson reports whether the person hears of a change by e-mail:
// of everything but the business marking a past appointment completed or
// a no-show, which changes nothing for them (its webhooks still go).
func mailsPerson(action string) bool {
	return action != booking.BusinessComplete && action != booking.BusinessNoShow
}

// Notified is what an executed mutation answers as `notified`.
type Notified = mutation.Notified

// Values of Notified.
const (
	Queued = "queued"
	Off    = "off"
	None   = "none"
)

// Queue is the part of store.Outbox a message is queued through, inside
// the caller's transaction.
type Queue interface {
	EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error
}

// Tx is what BookingChanged reads and writes inside the mutation's
// transaction (mutation.NotifyTx).
type Tx interface {
	Queue
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	ListWebhookEndpoints(ctx context.Context, businessID string) ([]store.WebhookEndpoint, error)
	// The business's reminders and the staff member's connected calendar
	// (docs/calendars.md).
	ReminderOffsets(ctx context.Context, businessID string) ([]time.Duration, error)
	GetStaffCalendar(ctx context.Context, staffID string) (store.StaffCalendar, error)
}

// Options configure a Notifier.
type Options struct {
	// Issuer is the authorization server's URL: its host names calendar
	// UIDs and Message-IDs, and e-mails link to its account pages.
	Issuer string
	// From is the From address of e-mails, for the invitation's organizer
	// (default mail.DefaultFrom of the issuer host).
	From string
	// MailOff: LINKSLOT_SMTP_URL=off; no e-mail is queued.
	MailOff bool
	Clock   store.Clock // default store.SystemClock
}

// Notifier queues notifications.
type Notifier struct {
	issuer  string
	host    string
	from    string
	mailOff bool
	clock   store.Clock
}

// New returns a Notifier.
func New(o Options) (*Notifier, error) {
	u, err := url.Parse(o.Issuer)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("notify: issuer %q is not a URL", o.Issuer)
	}
	n := &Notifier{issuer: strings.TrimRight(o.Issuer, "/"), host: u.Hostname(), from: o.From, mailOff: o.MailOff, clock: o.Clock}
	if n.from == "" {
		n.from = mail.DefaultFrom(n.host)
	}
	if n.clock == nil {
		n.clock = store.SystemClock
	}
	return n, nil
}

// Host is the issuer's host name (UIDs, Message-IDs).
func (n *Notifier) Host() string { return n.host }

// MailOff reports whether e-mail is switched off.
func (n *Notifier) MailOff() bool { return n.mailOff }

// Email is an e-mail for one person, written for them.
type Email struct {
	To      string
	Topic   string // what it is about: account.verify, password.reset, link.connected, …
	Subject string
	Text    string
	HTML    string // optional
}

// QueueEmail writes one e-mail into the outbox through tx (the caller's
// transaction, so it is sent exactly when the change it tells of commits).
// It answers false, writing nothing, when e-mail is off.
func (n *Notifier) QueueEmail(ctx context.Context, tx Queue, e Email) (bool, error) {
	if n.mailOff {
		return false, nil
	}
	if e.To == "" || e.Subject == "" || e.Text == "" || e.Topic == "" {
		return false, errors.New("notify: an e-mail needs a recipient, a topic, a subject and a text")
	}
	m := n.message(e.To, e.Subject, e.Text, e.HTML, "", "")
	return true, n.enqueueMail(ctx, tx, m, e.Topic, "", "")
}

func (n *Notifier) message(to, subject, text, html, cal, method string) mail.Message {
	return mail.Message{ID: store.NewID("msg"), To: to, Subject: subject, Text: text, HTML: html, Calendar: cal,
		Method: method, Date: n.clock()}
}

func (n *Notifier) enqueueMail(ctx context.Context, tx Queue, m mail.Message, topic, businessID, bookingID string) error {
	payload, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return tx.EnqueueMessages(ctx, store.OutboxMessage{ID: m.ID, Channel: store.ChannelEmail, Topic: topic,
		Recipient: m.To, BusinessID: businessID, BookingID: bookingID, Payload: payload, CreatedAt: m.Date})
}

// Change is one executed booking mutation.
type Change struct {
	Facts   booking.Facts // the facts its summary was rendered from
	Booking store.Booking // the booking as written
	// Person and Business are read through the transaction when not given
	// (zero ID).
	Person   store.Account
	Business store.Business
}

var _ mutation.Notifier = (*Notifier)(nil)

// Notify implements mutation.Notifier: BookingChanged for the mutation
// service's Change.
func (n *Notifier) Notify(ctx context.Context, tx mutation.NotifyTx, c mutation.Change) (mutation.Notified, error) {
	return n.BookingChanged(ctx, tx, Change{Facts: c.Facts, Booking: c.After, Person: c.Person, Business: c.Business})
}

// BookingChanged queues every notification of a change through tx, the
// mutation's transaction, and answers what it queued.
func (n *Notifier) BookingChanged(ctx context.Context, tx Tx, c Change) (Notified, error) {
	event := eventOf(c.Facts, c.Booking)
	if event == "" {
		return Notified{}, fmt.Errorf("notify: unknown action %q", c.Facts.Action)
	}
	acct, biz := c.Person, c.Business
	var err error
	if acct.ID == "" {
		if acct, err = tx.GetAccount(ctx, c.Booking.AccountID); err != nil {
			return Notified{}, fmt.Errorf("notify: account: %w", err)
		}
	}
	if biz.ID == "" {
		if biz, err = tx.GetBusiness(ctx, c.Facts.BusinessReference); err != nil {
			return Notified{}, fmt.Errorf("notify: business: %w", err)
		}
	}
	out := Notified{Person: Off, Business: None}
	now := n.clock()
	view := booking.ViewFromFacts(c.Facts, c.Booking)
	offsets, err := tx.ReminderOffsets(ctx, biz.ID)
	if err != nil {
		return Notified{}, fmt.Errorf("notify: reminders: %w", err)
	}
	// The staff member's CalDAV calendar gets the booking as it is when
	// the message is delivered (internal/calendar).
	switch cal, err := tx.GetStaffCalendar(ctx, c.Booking.StaffID); {
	case err == nil && cal.Kind == store.CalendarCalDAV:
		if err := tx.EnqueueMessages(ctx, CalendarMessage(c.Booking, now)); err != nil {
			return Notified{}, err
		}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Notified{}, fmt.Errorf("notify: calendar: %w", err)
	}
	// An erased account's bookings name "Deleted account" and have no
	// address to write to.
	customerName, customerEmail := store.CustomerOf(acct)
	if !mailsPerson(c.Facts.Action) {
		out.Person = None
	}
	if !n.mailOff && mailsPerson(c.Facts.Action) {
		letters := n.letters(c, view, store.AccountLabel(acct))
		inv, method, err := n.invitation(c, view, customerEmail, now, offsets)
		if err != nil {
			return Notified{}, err
		}
		if customerEmail != "" {
			p := letters.person
			if err := n.enqueueMail(ctx, tx, n.message(customerEmail, p.subject, p.text, p.html, inv, method), event, biz.ID, c.Booking.ID); err != nil {
				return Notified{}, err
			}
			out.Person = Queued
		}
		if biz.ContactEmail != "" {
			b := letters.business
			if err := n.enqueueMail(ctx, tx, n.message(biz.ContactEmail, b.subject, b.text, b.html, inv, method), event, biz.ID, c.Booking.ID); err != nil {
				return Notified{}, err
			}
			out.Business = Queued
		}
	}
	eps, err := tx.ListWebhookEndpoints(ctx, biz.ID)
	if err != nil {
		return Notified{}, fmt.Errorf("notify: webhook endpoints: %w", err)
	}
	var hooks []store.OutboxMessage
	var body []byte // the same event for every endpoint
	for _, ep := range eps {
		if !ep.Enabled || !slices.Contains(ep.Events, event) {
			continue
		}
		if body == nil {
			if body, err = json.Marshal(WebhookEvent{Type: event, Timestamp: now.UTC(), Data: WebhookData{
				Booking: view, Customer: Customer{Name: customerName, Email: customerEmail}}}); err != nil {
				return Notified{}, err
			}
		}
		hooks = append(hooks, store.OutboxMessage{ID: store.NewID("msg"), Channel: store.ChannelWebhook, Topic: event, EndpointID: ep.ID,
			BusinessID: biz.ID, BookingID: c.Booking.ID, Payload: body, CreatedAt: now})
	}
	if err := tx.EnqueueMessages(ctx, hooks...); err != nil {
		return Notified{}, err
	}
	out.Webhooks = len(hooks)
	if err := n.reminders(ctx, tx, c, view, biz, offsets, eps, customerName, customerEmail, now); err != nil {
		return Notified{}, err
	}
	return out, nil
}

// CalendarMessage is the outbox message that writes a booking's change into
// its staff member's CalDAV calendar (store.ChannelCalendar). Its id is
// fixed by the booking and version, so a change queued twice is one
// message; its delivery writes the booking as it is then.
func CalendarMessage(b store.Booking, now time.Time) store.OutboxMessage {
	return store.OutboxMessage{ID: fmt.Sprintf("cal_%d_%s", b.Version, b.ID), Channel: store.ChannelCalendar,
		Topic: "calendar.write", BusinessID: b.BusinessID, BookingID: b.ID, Payload: []byte("{}"), CreatedAt: now}
}

// WebhookEvent is the JSON body of a webhook delivery.
type WebhookEvent struct {
	Type      string      `json:"type"`
	Timestamp time.Time   `json:"timestamp"`
	Data      WebhookData `json:"data"`
}

// WebhookData is a webhook event's data: the booking as get_my_booking shows
// it (without the grant) and the customer.
type WebhookData struct {
	Booking  booking.BookingView `json:"booking"`
	Customer Customer            `json:"customer"`
}

// Customer is the person who booked (store.CustomerOf): for an erased
// account the name is "Deleted account" and the email empty.
type Customer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// invitation renders the change's calendar object: REQUEST for a booking
// that stands, CANCEL for a cancelled one.
func (n *Notifier) invitation(c Change, v booking.BookingView, email string, now time.Time, alarms []time.Duration) (string, string, error) {
	ev, err := n.CalendarEvent(v, c.Facts.BusinessAddress, email, now)
	if err != nil {
		return "", "", err
	}
	ev.Alarms = alarms // the same times as the reminders
	method := ical.MethodRequest
	if ev.Cancelled {
		method = ical.MethodCancel
	}
	s, err := ical.Invitation(method, ev)
	return s, method, err
}

// CalendarEvent is a booking as a calendar event: UID REFERENCE@ISSUER-HOST,
// SEQUENCE the booking's version, times in the business's zone.
func (n *Notifier) CalendarEvent(v booking.BookingView, address, attendee string, now time.Time) (ical.Event, error) {
	loc, err := time.LoadLocation(v.TimeZone)
	if err != nil {
		return ical.Event{}, fmt.Errorf("notify: time zone %q: %w", v.TimeZone, err)
	}
	ev := ical.Event{UID: v.Reference + "@" + n.host, Sequence: v.Version,
		Summary: v.ServiceName + " at " + v.BusinessName, Location: address,
		Description: fmt.Sprintf("Booking %s with %s. Manage your bookings at %s/account.", v.Reference, v.StaffName, n.issuer),
		Start:       v.StartsAt, End: v.EndsAt, Zone: loc, Cancelled: v.Status == store.BookingCancelled || v.Status == store.BookingDeclined,
		Tentative: v.Status == store.BookingPending,
		Organizer: ical.Person{Name: v.BusinessName, Email: addressOf(n.from)}, Stamp: now}
	if attendee != "" {
		ev.Attendees = []ical.Person{{Email: attendee}}
	}
	return ev, nil
}

func addressOf(from string) string {
	if i, j := strings.LastIndexByte(from, '<'), strings.LastIndexByte(from, '>'); i >= 0 && j > i {
		return from[i+1 : j]
	}
	return strings.TrimSpace(from)
}
