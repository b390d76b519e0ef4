package mutation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// ChannelBusiness is a business member acting in the business console.
const ChannelBusiness Channel = "business"

// Member roles.
const (
	RoleOwner = "owner"
	RoleStaff = "staff"
)

// Member is a business member acting in the console.
type Member struct {
	AccountID  string
	BusinessID string
	Role       string // RoleOwner or RoleStaff
	StaffID    string // RoleStaff: the staff record they are tied to; empty for owners
	Name       string // shown to the person in Activity and e-mails as who did it
}

// BusinessAction is what a member does with a booking.
type BusinessAction string

// Business actions (docs/reference.md "Bookings the business answers").
const (
	ActionConfirm  BusinessAction = booking.BusinessConfirm  // pending → confirmed
	ActionDecline  BusinessAction = booking.BusinessDecline  // pending → declined
	ActionComplete BusinessAction = booking.BusinessComplete // confirmed → completed, once started
	ActionNoShow   BusinessAction = booking.BusinessNoShow   // confirmed → no_show, once started
	ActionCancel   BusinessAction = booking.BusinessCancel   // pending or confirmed → cancelled, before the start; needs a reason
)

// BusinessRequest is one action of a member on a booking.
type BusinessRequest struct {
	BookingRef string
	Action     BusinessAction
	Reason     string // cancel (required) and decline (optional): told to the person
	// Version is the booking version the console's form showed: a
	// different current version answers booking_changed and changes
	// nothing.
	Version int
	// IdempotencyKey comes from the form (16–200 characters), so that a
	// double-submitted form acts once.
	IdempotencyKey string
}

// Statuses of an executed business action's Outcome, beside
// StatusConfirmed and StatusCancelled.
const (
	StatusPending   = store.BookingPending // create_my_booking of a service that requires confirmation
	StatusDeclined  = store.BookingDeclined
	StatusCompleted = store.BookingCompleted
	StatusNoShow    = store.BookingNoShow
)

// Kinds of Change of the business channel and of a pending create.
const (
	KindPending   = "pending" // a create that waits for the business
	KindConfirmed = "confirmed"
	KindDeclined  = "declined"
	KindCompleted = "completed"
	KindNoShow    = "no_show"
)

// DeclinedUnanswered is the reason told to the person when a pending
// booking was not answered in time.
const DeclinedUnanswered = "The business did not answer in time."

// OpBusiness is the Activity "tool" of a business action: "business:" and
// the action.
func OpBusiness(a BusinessAction) string { return "business:" + string(a) }

// opBusinessKeys is the idempotency "tool" of every business action: one
// key space per member, so that a key reused for another action or booking
// answers idempotency_conflict.
const opBusinessKeys = "business"

// OpExpire is the Activity "tool" of the job's decline of an unanswered
// booking.
const OpExpire = "business:expire"

var errNoMember = errors.New("mutation: a business action needs a member with an account, a business and a role (a staff member also a staff record)")

func (m Member) valid() bool {
	switch {
	case m.AccountID == "" || m.BusinessID == "":
		return false
	case m.Role == RoleOwner:
		return true
	case m.Role == RoleStaff:
		return m.StaffID != ""
	}
	return false
}

func (m Member) actor() booking.BusinessActor {
	a := booking.BusinessActor{BusinessID: m.BusinessID}
	if m.Role == RoleStaff {
		a.StaffID = m.StaffID
	}
	return a
}

// Business runs one member's action on a booking of their business
// (docs/reference.md "Bookings the business answers"). In order: the reason's
// text, the idempotency key's form, the key's lookup (a used key with the
// same request replays its stored answer, with another request answers
// idempotency_conflict; keys are scoped to the member's account), the
// engine's plan (a booking of another business, or of another staff member
// for staff, answers booking_not_found as if it did not exist; a Version
// other than the booking's, booking_changed; a transition its state does
// not allow, invalid_transition), then under the Keeper, in one
// transaction: the booking with its version bumped (every earlier grant
// dies), the Notifier's messages to the person and the business, the
// Activity entry on the person's Activity page (Via "business", Actor the
// member's name) and the idempotency record.
//
// The console has already shown the member what they act on, so there is
// no summarize-then-confirm step: the answer is executed or a refusal.
func (s *Service) Business(ctx context.Context, m Member, r BusinessRequest) (Outcome, error) {
	if !m.valid() {
		return Outcome{}, errNoMember
	}
	var err error
	if r.Reason, err = booking.CheckText("reason", r.Reason); err != nil {
		return Outcome{}, err
	}
	switch r.Action {
	case ActionConfirm, ActionDecline, ActionComplete, ActionNoShow, ActionCancel:
	default:
		return Outcome{}, problem.Newf(problem.CodeInvalidArgument, "Unknown action %q: use confirm, decline, complete, no_show or cancel.", r.Action).WithField("action")
	}
	if r.Version < 1 {
		return Outcome{}, problem.New(problem.CodeInvalidArgument, "The form does not say which version of the booking it showed; reload the page and try again.").WithField("version")
	}
	switch {
	case r.IdempotencyKey == "":
		return Outcome{}, problem.New(problem.CodeMissingIdempotencyKey, "The form has no idempotency key; reload the page and try again.").WithField(FieldIdempotencyKey)
	case !confirm.ValidKey(r.IdempotencyKey):
		return Outcome{}, problem.New(problem.CodeInvalidIdempotencyKey, "The form's idempotency key is malformed; reload the page and try again.").WithField(FieldIdempotencyKey)
	}
	ref := booking.NormalizeReference(r.BookingRef)
	args := map[string]any{"booking_reference": ref, "action": string(r.Action), "version": r.Version}
	if r.Reason != "" {
		args["reason"] = r.Reason
	}
	hash, err := idempotency.ArgsHash(args)
	if err != nil {
		return Outcome{}, err
	}
	scope, op := "member:"+m.AccountID, opBusinessKeys
	if raw, found, err := s.Keeper.Lookup(ctx, scope, op, r.IdempotencyKey, hash); err != nil {
		return Outcome{}, err
	} else if found {
		return replayed(raw)
	}
	late := func(err error) (Outcome, error) {
		// A duplicate submit whose first lookup missed fails only because
		// its original committed meanwhile: answer the original's result.
		if raw, found, lerr := s.Keeper.Lookup(ctx, scope, op, r.IdempotencyKey, hash); lerr == nil && found {
			return replayed(raw)
		}
		return Outcome{}, err
	}
	plan, err := s.Engine.PlanBusiness(ctx, booking.BusinessRequest{Actor: m.actor(), BookingRef: ref,
		Action: string(r.Action), Reason: r.Reason, Version: r.Version})
	if err != nil {
		return late(err)
	}
	plan.Facts.Actor = m.Name
	activityArgs, err := json.Marshal(args)
	if err != nil {
		return Outcome{}, fmt.Errorf("mutation: activity arguments: %w", err)
	}
	var out Outcome
	raw, replay, err := s.Keeper.Run(ctx, scope, op, r.IdempotencyKey, hash, func(tx Tx) ([]byte, error) {
		o, err := s.applyBusiness(ctx, tx, plan, Caller{AccountID: plan.Current.AccountID, Channel: ChannelBusiness},
			store.Activity{Tool: OpBusiness(r.Action), Arguments: activityArgs, IdempotencyKey: r.IdempotencyKey, Actor: m.Name})
		out = o
		if err != nil {
			return nil, err
		}
		return json.Marshal(storedOf(o))
	})
	if err != nil {
		return late(err)
	}
	if replay {
		return replayed(raw)
	}
	return out, nil
}

// businessKind maps an action to its Change kind and Outcome status.
func businessKind(action string) (kind, status string) {
	switch action {
	case booking.BusinessConfirm:
		return KindConfirmed, StatusConfirmed
	case booking.BusinessDecline:
		return KindDeclined, StatusDeclined
	case booking.BusinessComplete:
		return KindCompleted, StatusCompleted
	case booking.BusinessNoShow:
		return KindNoShow, StatusNoShow
	}
	return KindCancelled, StatusCancelled
}

// applyBusiness executes a business plan through tx: the booking, the
// notifications and the Activity entry a (Tool, Arguments, Actor,
// IdempotencyKey set by the caller) on the person's page.
func (s *Service) applyBusiness(ctx context.Context, tx Tx, plan booking.BusinessPlan, c Caller, a store.Activity) (Outcome, error) {
	b, err := s.Engine.ApplyBusiness(ctx, tx, plan)
	if err != nil {
		return Outcome{}, err
	}
	if store.HoldsSlot(plan.Current.Status) && !store.HoldsSlot(b.Status) {
		// A decline or a cancellation by the business frees the slot:
		// the waitlist's entry point (docs/design.md "The waitlist").
		if _, err := s.SlotFreed(ctx, tx, plan.Current); err != nil {
			return Outcome{}, err
		}
	}
	kind, status := businessKind(plan.Request.Action)
	summary, err := confirm.ForBusiness(plan.Facts, status)
	if err != nil {
		return Outcome{}, err
	}
	v := viewOf(plan.Facts, b)
	out := Outcome{Status: status, Summary: summary, Booking: &v}
	if s.Notifier != nil {
		before := plan.Current
		ch := Change{Kind: kind, Before: &before, After: b, Business: plan.Business(), Caller: c, Facts: plan.Facts, Summary: summary}
		if ch.Person, err = tx.GetAccount(ctx, b.AccountID); err != nil {
			return Outcome{}, fmt.Errorf("mutation: the booking's account: %w", err)
		}
		n, err := s.Notifier.Notify(ctx, tx, ch)
		if err != nil {
			return Outcome{}, fmt.Errorf("mutation: notify: %w", err)
		}
		out.Notified = &n
	}
	outcome, err := json.Marshal(storedOf(out))
	if err != nil {
		return Outcome{}, err
	}
	a.AccountID, a.Via, a.Summary, a.Outcome, a.CreatedAt = b.AccountID, string(ChannelBusiness), summary, outcome, s.now()
	if err := tx.AddActivity(ctx, a); err != nil {
		return Outcome{}, fmt.Errorf("activity: %w", err)
	}
	return out, nil
}

// ExpirePending declines up to limit pending bookings whose respond-by
// instant has come, each in its own transaction with its notifications
// (as a decline by the business, reason DeclinedUnanswered) and its
// Activity entry, and reports how many it declined. A booking answered or
// declined meanwhile (by the business, or by another process running the
// job) is skipped: the engine re-checks the state on the locked row, so
// each booking is declined exactly once.
func (s *Service) ExpirePending(ctx context.Context, limit int) (int64, error) {
	due, err := s.Engine.DuePending(ctx, limit)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range due {
		plan, err := s.Engine.PlanBusiness(ctx, booking.BusinessRequest{Actor: booking.BusinessActor{BusinessID: b.BusinessID},
			BookingRef: b.Reference, Action: booking.BusinessDecline, Reason: DeclinedUnanswered, Version: b.Version})
		if err != nil {
			if skippable(err) {
				continue
			}
			return n, err
		}
		args, err := json.Marshal(map[string]any{"booking_reference": b.Reference, "action": "expire"})
		if err != nil {
			return n, err
		}
		err = s.Transact(ctx, func(tx Tx) error {
			_, err := s.applyBusiness(ctx, tx, plan, Caller{AccountID: b.AccountID, Channel: ChannelBusiness},
				store.Activity{Tool: OpExpire, Arguments: args})
			return err
		})
		switch {
		case err == nil:
			n++
		case skippable(err):
		default:
			return n, err
		}
	}
	return n, nil
}

// skippable: the booking was answered, declined or changed since it was
// listed; nothing was written.
func skippable(err error) bool {
	switch problem.CodeOf(err) {
	case problem.CodeBookingChanged, problem.CodeInvalidTransition, problem.CodeBookingNotFound:
		return true
	}
	return false
}
