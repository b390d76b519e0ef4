package mutation

// Callback requests and the waitlist (docs/reference.md §16) through the same
// protocol as bookings: a preview with its summary, the confirmation
// fields, the idempotency key, one transaction with the Activity entry and
// the notifications.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Operation names of the two.
const (
	OpCallback = "request_business_callback"
	OpWaitlist = "join_my_waitlist"
)

// Statuses of their executed answers.
const (
	StatusRequested  = "requested"
	StatusWaitlisted = "waitlisted"
)

// CallbackRequest asks a business to contact the person. Field names of
// errors are the MCP argument names.
type CallbackRequest struct {
	BusinessRef    string
	Topic          string
	PreferredTimes string
	Notes          string
}

// WaitlistRequest asks to join a business's waitlist for a service.
type WaitlistRequest struct {
	BusinessRef      string
	ServiceRef       string
	StaffRef         string // with_staff_reference
	FromDate, ToDate string // from_local_date, to_local_date
	Earliest, Latest string // earliest_local_time, latest_local_time
}

// CallbackView is a callback request as its answer shows it.
type CallbackView struct {
	Reference         string    `json:"callback_reference"`
	Status            string    `json:"status" jsonschema:"open until the business marks it done"`
	BusinessReference string    `json:"business_reference"`
	BusinessName      string    `json:"business_name"`
	Topic             string    `json:"topic"`
	PreferredTimes    string    `json:"preferred_times,omitempty"`
	Notes             string    `json:"notes,omitempty"`
	ContactEmail      string    `json:"contact_email" jsonschema:"the account's verified address, which the business sees and answers"`
	CreatedAt         time.Time `json:"created_at"`
}

// CallbackChange is an executed callback request, for the Notifier.
type CallbackChange struct {
	Request  store.CallbackRequest
	Facts    booking.CallbackFacts
	Business store.Business
	Person   store.Account
}

// CallbackNotifier tells a business of a callback request (an e-mail to its
// contact address and a callback.requested webhook), in the request's
// transaction. A Notifier that implements it is asked.
type CallbackNotifier interface {
	CallbackRequested(ctx context.Context, tx NotifyTx, c CallbackChange) (Notified, error)
}

// OfferNotifier tells a waiting person of an offer (an e-mail) and the
// business (a waitlist.offered webhook), in the transaction that holds the
// slot. A Notifier that implements it is asked.
type OfferNotifier interface {
	WaitlistOffered(ctx context.Context, tx NotifyTx, o booking.Offered) error
}

// RequestCallback asks a business to contact the caller. The contact
// address is the caller's account's; the agent gives none.
func (s *Service) RequestCallback(ctx context.Context, c Caller, r CallbackRequest, conf Confirmation) (Outcome, error) {
	var err error
	if r.Topic, err = booking.CheckText("topic", r.Topic); err != nil {
		return Outcome{}, err
	}
	if r.PreferredTimes, err = booking.CheckText("preferred_times", r.PreferredTimes); err != nil {
		return Outcome{}, err
	}
	if r.Notes, err = booking.CheckText("notes", r.Notes); err != nil {
		return Outcome{}, err
	}
	args := map[string]any{"business_reference": r.BusinessRef, "topic": r.Topic}
	if r.PreferredTimes != "" {
		args["preferred_times"] = r.PreferredTimes
	}
	if r.Notes != "" {
		args["notes"] = r.Notes
	}
	m, out, done, err := s.start(ctx, c, OpCallback, conf, args, args)
	if done || err != nil {
		return out, err
	}
	if s.Accounts == nil {
		return Outcome{}, fmt.Errorf("mutation: no account reader for callback requests")
	}
	acct, err := s.Accounts.GetAccount(ctx, c.AccountID)
	if err != nil {
		return s.failed(ctx, m, fmt.Errorf("mutation: the caller's account: %w", err))
	}
	_, email := store.CustomerOf(acct)
	plan, err := s.Engine.PlanCallback(ctx, booking.CallbackRequest{AccountID: c.AccountID, LinkID: c.LinkID, ClientID: c.ClientID,
		BusinessRef: r.BusinessRef, Topic: r.Topic, PreferredTimes: r.PreferredTimes, Notes: r.Notes}, email)
	if err != nil {
		return s.failed(ctx, m, err)
	}
	summary, err := confirm.ForCallback(plan.Facts)
	if err != nil {
		return Outcome{}, err
	}
	facts := plan.Facts
	gate := func() error { return s.limitCallbacks(ctx, c) }
	return s.decide(ctx, m, summary, Outcome{CallbackFacts: &facts}, gate, func(tx Tx) (Outcome, error) {
		cr, err := s.Engine.WriteCallback(ctx, tx, plan)
		if err != nil {
			return Outcome{}, err
		}
		v := CallbackView{Reference: cr.Reference, Status: cr.Status, BusinessReference: facts.BusinessReference,
			BusinessName: facts.BusinessName, Topic: cr.Topic, PreferredTimes: cr.PreferredTimes, Notes: cr.Notes,
			ContactEmail: facts.ContactEmail, CreatedAt: cr.CreatedAt}
		out := Outcome{Status: StatusRequested, Callback: &v}
		if cn, ok := s.Notifier.(CallbackNotifier); ok {
			n, err := cn.CallbackRequested(ctx, tx, CallbackChange{Request: cr, Facts: facts, Business: plan.Business, Person: acct})
			if err != nil {
				return Outcome{}, fmt.Errorf("mutation: notify: %w", err)
			}
			out.Notified = &n
		}
		return out, nil
	})
}

// limitCallbacks applies the per-link limit on executed callback requests.
func (s *Service) limitCallbacks(ctx context.Context, c Caller) error {
	if s.CallbackLimit == nil {
		return nil
	}
	ok, after := s.CallbackLimit.Allow(ctx, c.scope())
	if ok {
		return nil
	}
	secs := int((after + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return &problem.Error{Code: problem.CodeRateLimited, RetryAfterSec: secs,
		Message: fmt.Sprintf("This connection has sent as many callback requests as it may for now; nothing was sent. Tell the person, or retry the same call in %d seconds.", secs)}
}

// JoinWaitlist puts the caller on a business's waitlist for a service.
func (s *Service) JoinWaitlist(ctx context.Context, c Caller, r WaitlistRequest, conf Confirmation) (Outcome, error) {
	args := map[string]any{"business_reference": r.BusinessRef, "service_reference": r.ServiceRef,
		"from_local_date": r.FromDate, "to_local_date": r.ToDate}
	for k, v := range map[string]string{"with_staff_reference": r.StaffRef, "earliest_local_time": r.Earliest, "latest_local_time": r.Latest} {
		if v != "" {
			args[k] = v
		}
	}
	m, out, done, err := s.start(ctx, c, OpWaitlist, conf, args, args)
	if done || err != nil {
		return out, err
	}
	plan, err := s.Engine.PlanWaitlist(ctx, booking.WaitlistRequest{AccountID: c.AccountID, LinkID: c.LinkID,
		BusinessRef: r.BusinessRef, ServiceRef: r.ServiceRef, StaffRef: r.StaffRef, FromDate: r.FromDate, ToDate: r.ToDate,
		Earliest: r.Earliest, Latest: r.Latest})
	if err != nil {
		return s.failed(ctx, m, err)
	}
	summary, err := confirm.ForWaitlist(plan.Facts)
	if err != nil {
		return Outcome{}, err
	}
	facts := plan.Facts
	return s.decide(ctx, m, summary, Outcome{WaitlistFacts: &facts}, nil, func(tx Tx) (Outcome, error) {
		ent, err := s.Engine.JoinWaitlist(ctx, tx, plan)
		if err != nil {
			return Outcome{}, err
		}
		v := booking.WaitlistViewOf(facts, ent)
		return Outcome{Status: StatusWaitlisted, Waitlist: &v}, nil
	})
}

// SlotFreed is the waitlist's entry point for every change that frees a
// booking's slot: call it inside that change's transaction with the booking
// as it was. Cancel, Reschedule, the business channel's decline and cancel
// (applyBusiness, the expiry job included) and LeaveWaitlist call it. The
// first waiting person it matches is offered the slot and told, in the same
// transaction (booking.Service.SlotFreed decides; docs/design.md "The
// waitlist").
func (s *Service) SlotFreed(ctx context.Context, tx Tx, freed store.Booking) (*booking.Offered, error) {
	o, err := s.Engine.SlotFreed(ctx, tx, freed)
	if err != nil || o == nil {
		return o, err
	}
	if on, ok := s.Notifier.(OfferNotifier); ok {
		if err := on.WaitlistOffered(ctx, tx, *o); err != nil {
			return nil, fmt.Errorf("mutation: notify offer: %w", err)
		}
	}
	return o, nil
}

// SpanTx is what offering a freed span reaches in its transaction: the
// engine's (booking.SpanTx) and the offers' notifications (NotifyTx).
type SpanTx interface {
	booking.SpanTx
	NotifyTx
}

var _ SpanTx = store.Store(nil)

// SpanFreed is the waitlist's entry point for time freed of one staff
// member of a business rather than one booking's slot: [start, end) of
// staffID, e.g. a time off removed in the console (business.Service's
// RemoveTimeOff, wired by internal/app) or a connected calendar's event
// deleted. Call it after the change that freed the span has committed: it
// runs in a transaction of its own, in which the engine offers the span's
// open slots to the waiting people in join order, at most one each
// (booking.Service.SpanFreed), and each person and the business are told
// (OfferNotifier). Whether a slot is offered is decided by the database as
// for SlotFreed, so two replicas, or a removal and the lapsing job, never
// offer one slot twice (docs/design.md "The waitlist"). It answers the
// offers made, none when nobody waiting fits.
func (s *Service) SpanFreed(ctx context.Context, businessID, staffID string, start, end time.Time) ([]booking.Offered, error) {
	var out []booking.Offered
	err := s.Transact(ctx, func(t Tx) error {
		var tx SpanTx = t
		os, err := s.Engine.SpanFreed(ctx, tx, businessID, staffID, start, end)
		if err != nil {
			return err
		}
		if on, ok := s.Notifier.(OfferNotifier); ok {
			for _, o := range os {
				if err := on.WaitlistOffered(ctx, tx, o); err != nil {
					return fmt.Errorf("mutation: notify offer: %w", err)
				}
			}
		}
		out = os
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OpLeaveWaitlist names leaving a waitlist (Activity, idempotency); only
// the web offers it, so it is recorded as "web:leave_waitlist".
const OpLeaveWaitlist = "leave_waitlist"

// StatusLeft is the answer of LeaveWaitlist.
const StatusLeft = "left"

// LeaveWaitlist takes the caller off the list of one of their waitlist
// entries (My bookings), in one transaction with its Activity entry, under
// key (the form's, so a resent form replays). An offer the entry held
// lapses and its slot passes to the next person waiting (SlotFreed).
// booking_not_found-like answers: problem codes not_found (no such entry
// of the caller's) and conflict (it is no longer on the list).
func (s *Service) LeaveWaitlist(ctx context.Context, c Caller, reference, key string) (Outcome, error) {
	if c.AccountID == "" {
		return Outcome{}, errNoAccount
	}
	args := map[string]any{"waitlist_reference": reference}
	hash, err := idempotency.ArgsHash(args)
	if err != nil {
		return Outcome{}, err
	}
	op := c.op(OpLeaveWaitlist)
	summary := "Leave the waitlist: entry " + reference + "."
	var out Outcome
	raw, replay, err := s.Keeper.Run(ctx, c.scope(), op, key, hash, func(tx Tx) ([]byte, error) {
		ent, held, err := tx.LeaveWaitlist(ctx, c.AccountID, reference, s.now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, problem.New(problem.CodeNotFound, "You have no waitlist entry with that reference.")
		case errors.Is(err, store.ErrConflict):
			return nil, problem.New(problem.CodeConflict, "You are no longer on that waitlist.")
		case err != nil:
			return nil, fmt.Errorf("mutation: leave waitlist: %w", err)
		}
		sum := summary
		if held != nil {
			sum += " The time held for you was passed on."
			if _, err := s.SlotFreed(ctx, tx, booking.OfferSpan(*held)); err != nil {
				return nil, err
			}
		}
		out = Outcome{Status: StatusLeft, Summary: sum, Waitlist: &booking.WaitlistView{Reference: ent.Reference, Status: ent.Status}}
		resp, err := json.Marshal(storedOf(out))
		if err != nil {
			return nil, err
		}
		argJSON, _ := json.Marshal(args)
		if err := tx.AddActivity(ctx, store.Activity{AccountID: c.AccountID, LinkID: c.LinkID, ClientID: c.ClientID, Via: c.via(),
			Tool: op, Arguments: argJSON, Summary: sum, ConfirmationText: `Pressed "Leave the waitlist" on the Linkslot web page.`,
			IdempotencyKey: key, Outcome: resp, RequestID: c.RequestID, CreatedAt: s.now()}); err != nil {
			return nil, fmt.Errorf("activity: %w", err)
		}
		return resp, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if replay {
		return replayed(raw)
	}
	return out, nil
}
