package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
)

// EventReminder is the topic of a reminder before an appointment: an
// e-mail to the person and a webhook event (docs/calendars.md,
// "Reminders").
const EventReminder = "booking.reminder"

// A reminder is queued with the booking's change, due at its time: an
// outbox message whose NextAttemptAt is the reminder's time and whose id is
// fixed by the booking, its version, the offset and the recipient, so the
// same reminder is one message however often it is queued, and one lease
// delivers it once across replicas and restarts. Its CreatedAt is its due
// time, so its day of retries starts then. At delivery it is checked
// against the booking as it is then: a booking cancelled, or changed to a
// later version (moved: that version queued its own reminders), sends
// nothing.

// reminderID is the id of one reminder: rem_VERSION_MINUTES_WHO_BOOKING.
func reminderID(b store.Booking, off time.Duration, who string) string {
	return fmt.Sprintf("rem_%d_%d_%s_%s", b.Version, int(off/time.Minute), who, b.ID)
}

// reminderVersion reads the booking version back from a reminder's id.
func reminderVersion(id string) (int, bool) {
	parts := strings.SplitN(id, "_", 3)
	if len(parts) < 3 || parts[0] != "rem" {
		return 0, false
	}
	v, err := strconv.Atoi(parts[1])
	return v, err == nil
}

// reminders queues the reminders of a booking that holds its slot
// (confirmed, or pending: the letter says it awaits the business's
// confirmation; docs/calendars.md "Reminders"), each due off before its
// start, skipping those already past.
func (n *Notifier) reminders(ctx context.Context, tx Tx, c Change, v booking.BookingView, biz store.Business,
	offsets []time.Duration, eps []store.WebhookEndpoint, customerName, customerEmail string, now time.Time) error {
	b := c.Booking
	if !store.HoldsSlot(b.Status) || c.Facts.Action == "cancel" {
		return nil
	}
	var ms []store.OutboxMessage
	for _, off := range offsets {
		due := store.UTC(b.StartsAt.Add(-off))
		if !due.After(now) {
			continue
		}
		if !n.mailOff && customerEmail != "" {
			l := n.reminderLetter(c, v, off)
			m := n.message(customerEmail, l.subject, l.text, l.html, "", "")
			m.ID, m.Date = reminderID(b, off, "p"), due
			payload, err := json.Marshal(m)
			if err != nil {
				return err
			}
			ms = append(ms, store.OutboxMessage{ID: m.ID, Channel: store.ChannelEmail, Topic: EventReminder, Recipient: m.To,
				BusinessID: biz.ID, BookingID: b.ID, Payload: payload, CreatedAt: due, NextAttemptAt: due})
		}
		var body []byte
		for _, ep := range eps {
			if !ep.Enabled || !slices.Contains(ep.Events, EventReminder) {
				continue
			}
			if body == nil {
				var err error
				if body, err = json.Marshal(WebhookEvent{Type: EventReminder, Timestamp: due, Data: WebhookData{
					Booking: v, Customer: Customer{Name: customerName, Email: customerEmail}}}); err != nil {
					return err
				}
			}
			ms = append(ms, store.OutboxMessage{ID: reminderID(b, off, ep.ID), Channel: store.ChannelWebhook, Topic: EventReminder,
				EndpointID: ep.ID, BusinessID: biz.ID, BookingID: b.ID, Payload: body, CreatedAt: due, NextAttemptAt: due})
		}
	}
	return tx.EnqueueMessages(ctx, ms...)
}

func (n *Notifier) reminderLetter(c Change, v booking.BookingView, off time.Duration) letter {
	f := c.Facts
	loc := v.StartsAt.Location()
	where := oneLine(f.BusinessName)
	if f.BusinessAddress != "" {
		where += ", " + oneLine(f.BusinessAddress)
	}
	subject := fmt.Sprintf("Reminder: %s at %s, %s", oneLine(v.ServiceName), oneLine(v.BusinessName), v.StartsAt.Format("Mon 2 Jan 15:04"))
	facts := []fact{{"Booking", v.Reference}, {"Business", where}, {"Service", oneLine(v.ServiceName)}, {"With", oneLine(v.StaffName)},
		{"When", confirm.LocalSpan(v.StartsAt, v.EndsAt, loc)}, {"Cancellation", cancellation(f, v.StartsAt, loc)}}
	intro := fmt.Sprintf("A reminder: your appointment is in %s.", inWords(off))
	if c.Booking.Status == store.BookingPending {
		subject = "Reminder (awaiting confirmation): " + strings.TrimPrefix(subject, "Reminder: ")
		intro += fmt.Sprintf(" %s has not confirmed it yet; you will hear when they do.", oneLine(v.BusinessName))
	}
	outro := []string{"To change or cancel this booking, ask the app you booked with, or visit " + n.issuer + "/account."}
	return render(subject, intro, facts, outro)
}

// inWords says an offset as a letter does: "24 hours", "2 hours",
// "30 minutes", "1 hour 30 minutes".
func inWords(d time.Duration) string {
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	unit := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	switch {
	case h > 0 && m > 0:
		return unit(h, "hour", "hours") + " " + unit(m, "minute", "minutes")
	case h > 0:
		return unit(h, "hour", "hours")
	}
	return unit(m, "minute", "minutes")
}

// BookingReader reads a booking at delivery.
type BookingReader interface {
	GetBooking(ctx context.Context, id string) (store.Booking, error)
}

// CheckReminders wraps the deliverer of a channel that carries reminders
// (e-mail, webhook): a reminder whose booking is cancelled, gone or at a
// later version is not sent (and counts as done); every other message goes
// to next as it is.
func CheckReminders(bookings BookingReader, next outbox.Deliverer) outbox.Deliverer {
	return outbox.DeliverFunc(func(ctx context.Context, m store.OutboxMessage) outbox.Result {
		if m.Topic != EventReminder {
			return next.Deliver(ctx, m)
		}
		ver, ok := reminderVersion(m.ID)
		if !ok {
			return outbox.Result{Err: errors.New("a reminder without a booking version"), Permanent: true}
		}
		b, err := bookings.GetBooking(ctx, m.BookingID)
		if errors.Is(err, store.ErrNotFound) {
			return outbox.Result{OK: true}
		}
		if err != nil {
			return outbox.Result{Err: fmt.Errorf("read the booking: %w", err)}
		}
		if !Remindable(b, ver) {
			return outbox.Result{OK: true}
		}
		return next.Deliver(ctx, m)
	})
}

// Remindable reports whether a reminder queued for version ver of a
// booking is still to be sent: the booking holds its slot (pending or
// confirmed) at that version. Confirming or declining a pending booking
// changes its version, so its pending reminders are dropped and a
// confirmation queues its own.
func Remindable(b store.Booking, ver int) bool {
	return b.Version == ver && store.HoldsSlot(b.Status)
}
