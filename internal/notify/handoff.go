package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/callbacks"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/store"
)

var (
	_ mutation.CallbackNotifier = (*Notifier)(nil)
	_ mutation.OfferNotifier    = (*Notifier)(nil)
	_ callbacks.Notifier        = (*Notifier)(nil)
)

// CallbackEvent is the data of a callback.requested webhook: the request
// and the customer, whose address is the account's verified one.
type CallbackEvent struct {
	Type      string       `json:"type"`
	Timestamp time.Time    `json:"timestamp"`
	Data      CallbackData `json:"data"`
}

// CallbackData is a callback.requested event's data.
type CallbackData struct {
	Callback CallbackInfo `json:"callback"`
	Customer Customer     `json:"customer"`
}

// CallbackInfo is a callback request as the business sees it.
type CallbackInfo struct {
	Reference         string    `json:"callback_reference"`
	BusinessReference string    `json:"business_reference"`
	Topic             string    `json:"topic"`
	PreferredTimes    string    `json:"preferred_times,omitempty"`
	Notes             string    `json:"notes,omitempty"`
	Status            string    `json:"status"`
	CreatedAt         time.Time `json:"created_at"`
}

// CallbackRequested implements mutation.CallbackNotifier: an e-mail to the
// business's contact address and a callback.requested event to each
// subscribed webhook endpoint. The person is not e-mailed (the request is
// on their Activity page); the business answers them.
func (n *Notifier) CallbackRequested(ctx context.Context, tx mutation.NotifyTx, c mutation.CallbackChange) (mutation.Notified, error) {
	out := Notified{Person: Off, Business: None}
	name, email := store.CustomerOf(c.Person)
	now := n.clock()
	r := c.Request
	if !n.mailOff && c.Business.ContactEmail != "" {
		facts := []fact{{"Request", r.Reference}, {"Customer", oneLine(name)}, {"Reply to", email}, {"Topic", quoted(r.Topic)}}
		if strings.TrimSpace(r.PreferredTimes) != "" {
			facts = append(facts, fact{"Preferred times", quoted(r.PreferredTimes)})
		}
		if strings.TrimSpace(r.Notes) != "" {
			facts = append(facts, fact{"Notes", quoted(r.Notes)})
		}
		subject := fmt.Sprintf("Callback requested: %s (%s)", oneLine(truncate(r.Topic, 60)), oneLine(name))
		l := render(subject, "A customer asked you, through Linkslot, to get back to them.", facts,
			[]string{"Reply to the address above. Mark the request done in your business console at " + n.issuer + "/business; the customer is told."})
		if err := n.enqueueMail(ctx, tx, n.message(c.Business.ContactEmail, l.subject, l.text, l.html, "", ""), EventCallbackRequested, c.Business.ID, ""); err != nil {
			return Notified{}, err
		}
		out.Business = Queued
	}
	body, err := json.Marshal(CallbackEvent{Type: EventCallbackRequested, Timestamp: now.UTC(), Data: CallbackData{
		Callback: CallbackInfo{Reference: r.Reference, BusinessReference: c.Business.Reference, Topic: r.Topic,
			PreferredTimes: r.PreferredTimes, Notes: r.Notes, Status: r.Status, CreatedAt: r.CreatedAt.UTC()},
		Customer: Customer{Name: name, Email: email}}})
	if err != nil {
		return Notified{}, err
	}
	hooks, err := n.hooks(ctx, tx, c.Business.ID, EventCallbackRequested, "", body, now)
	if err != nil {
		return Notified{}, err
	}
	out.Webhooks = hooks
	return out, nil
}

// CallbackDone tells the person that the business marked their callback
// request done (an e-mail, unless e-mail is off or the account is gone).
func (n *Notifier) CallbackDone(ctx context.Context, tx callbacks.Queue, r store.CallbackRequest, business store.Business, person store.Account) (bool, error) {
	_, email := store.CustomerOf(person)
	if n.mailOff || email == "" {
		return false, nil
	}
	subject := fmt.Sprintf("%s has handled your callback request", oneLine(business.Name))
	l := render(subject, oneLine(business.Name)+" marked your request to be contacted as done.",
		[]fact{{"Request", r.Reference}, {"Topic", quoted(r.Topic)}},
		[]string{"If they have not reached you, contact them directly. Your requests are listed at " + n.issuer + "/account/activity."})
	return true, n.enqueueMail(ctx, tx, n.message(email, l.subject, l.text, l.html, "", ""), "callback.done", business.ID, "")
}

// OfferEvent is the data of a waitlist.offered webhook.
type OfferEvent struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      OfferData `json:"data"`
}

// OfferData is a waitlist.offered event's data.
type OfferData struct {
	Offer    OfferInfo `json:"offer"`
	Customer Customer  `json:"customer"`
}

// OfferInfo is a held slot as the business sees it.
type OfferInfo struct {
	Reference         string    `json:"offer_reference"`
	WaitlistReference string    `json:"waitlist_reference"`
	BusinessReference string    `json:"business_reference"`
	ServiceReference  string    `json:"service_reference"`
	ServiceName       string    `json:"service_name"`
	StaffReference    string    `json:"staff_reference"`
	StaffName         string    `json:"staff_name"`
	StartsAt          time.Time `json:"starts_at"`
	EndsAt            time.Time `json:"ends_at"`
	HeldUntil         time.Time `json:"held_until"`
	TimeZone          string    `json:"timezone"`
}

// WaitlistOffered implements mutation.OfferNotifier: an e-mail to the
// person offered the slot and a waitlist.offered event to each subscribed
// webhook endpoint of the business.
func (n *Notifier) WaitlistOffered(ctx context.Context, tx mutation.NotifyTx, o booking.Offered) error {
	acct, err := tx.GetAccount(ctx, o.Offer.AccountID)
	if err != nil {
		return fmt.Errorf("notify: account: %w", err)
	}
	name, email := store.CustomerOf(acct)
	f := o.Facts
	loc, err := time.LoadLocation(f.TimeZone)
	if err != nil {
		return fmt.Errorf("notify: time zone %q: %w", f.TimeZone, err)
	}
	now := n.clock()
	if !n.mailOff && email != "" {
		where := oneLine(f.BusinessName)
		if f.BusinessAddress != "" {
			where += ", " + oneLine(f.BusinessAddress)
		}
		held := o.Offer.HeldUntil.In(loc).Format("15:04 MST on Monday 2 January")
		subject := fmt.Sprintf("A time opened up: %s at %s, %s", oneLine(f.ServiceName), oneLine(f.BusinessName), f.StartsAt.In(loc).Format("Mon 2 Jan 15:04"))
		l := render(subject, "A time you are waiting for is free, and it is held for you until "+held+".",
			[]fact{{"Offer", o.Offer.Reference}, {"Business", where}, {"Service", oneLine(f.ServiceName)}, {"With", oneLine(f.StaffName)},
				{"When", confirm.LocalSpan(f.StartsAt, f.EndsAt, loc)},
				{"Price", confirm.Money{Cents: f.PriceCents, Currency: f.Currency}.String() + " (catalog price, paid at the business)"},
				{"Held until", held}},
			[]string{"Ask the app you joined the waitlist with to book it (it needs the offer reference above). If you do nothing, it passes to the next person and you stay on the waitlist.",
				"Leave the waitlist at " + n.issuer + "/account/bookings."})
		if err := n.enqueueMail(ctx, tx, n.message(email, l.subject, l.text, l.html, "", ""), EventWaitlistOffered, o.Business.ID, ""); err != nil {
			return err
		}
	}
	body, err := json.Marshal(OfferEvent{Type: EventWaitlistOffered, Timestamp: now.UTC(), Data: OfferData{
		Offer: OfferInfo{Reference: o.Offer.Reference, WaitlistReference: o.Entry.Reference, BusinessReference: f.BusinessReference,
			ServiceReference: f.ServiceReference, ServiceName: f.ServiceName, StaffReference: f.StaffReference, StaffName: f.StaffName,
			StartsAt: f.StartsAt.In(loc), EndsAt: f.EndsAt.In(loc), HeldUntil: o.Offer.HeldUntil.In(loc), TimeZone: f.TimeZone},
		Customer: Customer{Name: name, Email: email}}})
	if err != nil {
		return err
	}
	_, err = n.hooks(ctx, tx, o.Business.ID, EventWaitlistOffered, "", body, now)
	return err
}

// hooks queues body as one event per enabled endpoint of the business
// subscribed to event, and answers how many.
func (n *Notifier) hooks(ctx context.Context, tx mutation.NotifyTx, businessID, event, bookingID string, body []byte, now time.Time) (int, error) {
	eps, err := tx.ListWebhookEndpoints(ctx, businessID)
	if err != nil {
		return 0, fmt.Errorf("notify: webhook endpoints: %w", err)
	}
	var ms []store.OutboxMessage
	for _, ep := range eps {
		if !ep.Enabled || !slices.Contains(ep.Events, event) {
			continue
		}
		ms = append(ms, store.OutboxMessage{ID: store.NewID("msg"), Channel: store.ChannelWebhook, Topic: event, EndpointID: ep.ID,
			BusinessID: businessID, BookingID: bookingID, Payload: body, CreatedAt: now})
	}
	if err := tx.EnqueueMessages(ctx, ms...); err != nil {
		return 0, err
	}
	return len(ms), nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
