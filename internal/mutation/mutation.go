package mutation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/idempotency"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Channel is how a caller reaches Linkslot; Activity.Via records it.
type Channel string

// Channels.
const (
	ChannelAgent Channel = "agent" // an MCP client acting through a link
	ChannelWeb   Channel = "web"   // the person, signed in on the web pages
	// ChannelBusiness (business.go): a member of the business, in the
	// business console.
)

// Caller is who asks for a change. AccountID is always set: the account the
// booking belongs to. An agent also has LinkID and ClientID.
type Caller struct {
	AccountID string
	LinkID    string // ChannelAgent: the link the token carries; ChannelWeb: empty
	ClientID  string // ChannelAgent: the client of the link; ChannelWeb: empty
	Channel   Channel
	// RequestID is the front end's request id, recorded in Activity.
	RequestID string
}

func (c Caller) agent() bool { return c.Channel != ChannelWeb && c.Channel != ChannelBusiness }

// scope is what idempotency keys are scoped to: the link for an agent, the
// account for a person on the web.
func (c Caller) scope() string {
	if c.agent() {
		return c.LinkID
	}
	return "account:" + c.AccountID
}

// via is the channel recorded in Activity.
func (c Caller) via() string {
	if c.agent() {
		return string(ChannelAgent)
	}
	return string(ChannelWeb)
}

// Confirmation are the five confirmation fields; nil means absent. All
// absent: a preview. All present: execute.
type Confirmation = confirm.Fields

// The confirmation fields' names, as the MCP tools' input schemas spell them
// and as Outcome.Missing and error fields name them.
const (
	FieldConfirmedSummary     = confirm.FieldConfirmedSummary
	FieldSummaryPresented     = confirm.FieldSummaryPresented
	FieldConfirmationObtained = confirm.FieldConfirmationObtained
	FieldUserConfirmationText = confirm.FieldUserConfirmationText
	FieldIdempotencyKey       = confirm.FieldIdempotencyKey
)

// ConfirmationFields are the five names, in the order Missing lists them.
var ConfirmationFields = confirm.FieldNames

// Outcome statuses.
const (
	// Nothing changed: show Summary and ask (a preview, or Missing lists
	// the absent fields).
	StatusConfirmationRequired = problem.CodeConfirmationRequired
	// Nothing changed: only idempotency_key was missing.
	StatusMissingIdempotencyKey = problem.CodeMissingIdempotencyKey
	// Nothing changed: the details changed since the summary; Summary is
	// the new one.
	StatusSummaryChanged = problem.CodeSummaryChanged
	// Executed (or already so, for cancel).
	StatusConfirmed   = "confirmed"
	StatusRescheduled = "rescheduled"
	StatusCancelled   = "cancelled"
)

// Kinds of Change, also the Activity vocabulary of booking events.
const (
	KindCreated     = "created"
	KindRescheduled = "rescheduled"
	KindCancelled   = "cancelled"
)

// Operation names, the idempotency and Activity "tool" of each mutation. An
// agent's are the MCP tool names; a web caller's are prefixed "web:" so that
// the two channels never share a key space or an Activity label.
const (
	OpCreate     = "create_my_booking"
	OpReschedule = "reschedule_my_booking"
	OpCancel     = "cancel_my_booking"
)

func (c Caller) op(name string) string {
	if c.agent() {
		return name
	}
	return "web:" + name
}

// CreateRequest asks to book a service. Field names of errors are the MCP
// argument names: business_reference, service_reference, staff_reference,
// starts_at, notes.
type CreateRequest struct {
	BusinessRef string
	ServiceRef  string
	StaffRef    string
	StartsAt    time.Time
	Notes       string
	// OfferRef books the slot a waitlist offer holds for the caller
	// (offer_reference, docs/reference.md §16).
	OfferRef string
}

// RescheduleRequest asks to move a booking. Grant is required from an agent
// and ignored from the web.
type RescheduleRequest struct {
	BookingRef string
	Grant      string
	StartsAt   time.Time // requested_starts_at
	StaffRef   string    // with_staff_reference; empty keeps the staff member
}

// CancelRequest asks to cancel a booking. Grant as for RescheduleRequest.
type CancelRequest struct {
	BookingRef string
	Grant      string
	Reason     string
}

// Outcome is the answer of a mutation that did not fail.
type Outcome struct {
	Status string
	// Summary is the confirmation summary: the one to show (not executed)
	// or the one the person confirmed (executed).
	Summary string
	// Missing lists the absent confirmation fields (StatusConfirmationRequired
	// after a partial confirmation, StatusMissingIdempotencyKey).
	Missing []string
	// Message is internal/confirm's guidance when nothing was executed.
	Message string
	// Facts are what the summary shows, structured (not executed; empty on
	// a replay).
	Facts booking.Facts
	// Booking is the booking after the change (executed, already
	// cancelled, replay).
	Booking *booking.BookingView
	// Grant is the booking's current grant for the caller's link (agents
	// only).
	Grant string
	// AlreadyCancelled: cancel found the booking cancelled; nothing changed.
	AlreadyCancelled bool
	// Replay: this is the stored answer of an earlier call with the same
	// idempotency key; nothing changed this time.
	Replay bool
	// Notified is what the Notifier queued (nil without a Notifier).
	Notified *Notified

	// Callback is the callback request written (request_business_callback).
	Callback *CallbackView
	// Waitlist is the waitlist entry written (join_my_waitlist).
	Waitlist *booking.WaitlistView
	// CallbackFacts and WaitlistFacts are what those summaries show (not
	// executed).
	CallbackFacts *booking.CallbackFacts
	WaitlistFacts *booking.WaitlistFacts
}

// Refused reports an Outcome that changed nothing and asks the caller to
// act (missing fields, changed summary) — an error result for an agent. A
// preview is not refused.
func (o Outcome) Refused() bool {
	return o.Status == StatusSummaryChanged || len(o.Missing) > 0
}

// Notified is what a change queued (docs/reference.md §11 "notified").
type Notified struct {
	Person   string `json:"person"`   // "queued" or "off"
	Business string `json:"business"` // "queued" or "none"
	Webhooks int    `json:"webhooks"` // webhook events queued
}

// Change is an executed mutation, handed to the Notifier inside its
// transaction.
type Change struct {
	Kind     string         // KindCreated, KindRescheduled, KindCancelled
	Before   *store.Booking // nil for a create
	After    store.Booking
	Business store.Business
	Person   store.Account // the booking's account
	Caller   Caller
	Facts    booking.Facts // names, time zone and times as the summary shows them
	Summary  string
}

// Notifier writes the messages of an executed change through tx, the
// mutation's transaction, and reports what it queued. An error aborts the
// mutation. See the package doc.
type Notifier interface {
	Notify(ctx context.Context, tx NotifyTx, c Change) (Notified, error)
}

// NotifyTx is what a Notifier reaches in the mutation's transaction: the
// outbox it queues messages into, and the reads those messages need.
type NotifyTx interface {
	EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error
	GetAccount(ctx context.Context, id string) (store.Account, error)
	GetBusiness(ctx context.Context, reference string) (store.Business, error)
	ListWebhookEndpoints(ctx context.Context, businessID string) ([]store.WebhookEndpoint, error)
	ReminderOffsets(ctx context.Context, businessID string) ([]time.Duration, error)
	GetStaffCalendar(ctx context.Context, staffID string) (store.StaffCalendar, error)
}

// Tx is everything a mutation reaches in its one transaction: the Keeper's
// idempotency record, the engine's booking writes, the booking's account,
// the Notifier's messages and the Activity entry. Nothing else can be
// written with the booking.
type Tx interface {
	idempotency.Tx
	booking.Tx
	booking.CallbackTx
	booking.WaitlistTx
	booking.FreedTx
	NotifyTx
	LeaveWaitlist(ctx context.Context, accountID, reference string, now time.Time) (store.WaitlistEntry, *store.WaitlistOffer, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
	AddActivity(ctx context.Context, a store.Activity) error
}

var _ Tx = store.Store(nil)

// Transactor is a store that runs transactions (store.Store's InTx).
type Transactor interface {
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// InTx narrows s's transactions to Tx, for the Keeper:
// idempotency.New(s, mutation.InTx(s), clock, ttl).
func InTx(s Transactor) func(ctx context.Context, fn func(tx Tx) error) error {
	return func(ctx context.Context, fn func(tx Tx) error) error {
		return s.InTx(ctx, func(tx store.Store) error { return fn(tx) })
	}
}

// Engine is the part of the booking engine the service drives;
// *booking.Service implements it.
type Engine interface {
	PlanCreate(ctx context.Context, r booking.CreateRequest) (booking.CreatePlan, error)
	Create(ctx context.Context, tx booking.Tx, p booking.CreatePlan) (store.Booking, error)
	PlanReschedule(ctx context.Context, r booking.RescheduleRequest) (booking.ReschedulePlan, error)
	Reschedule(ctx context.Context, tx booking.Tx, p booking.ReschedulePlan) (store.Booking, error)
	PlanCancel(ctx context.Context, r booking.CancelRequest) (booking.CancelPlan, error)
	Cancel(ctx context.Context, tx booking.Tx, p booking.CancelPlan) (store.Booking, error)
	MyBooking(ctx context.Context, accountID, bookingRef string) (booking.BookingView, error)

	PlanCallback(ctx context.Context, r booking.CallbackRequest, email string) (booking.CallbackPlan, error)
	WriteCallback(ctx context.Context, tx booking.CallbackTx, p booking.CallbackPlan) (store.CallbackRequest, error)
	PlanWaitlist(ctx context.Context, r booking.WaitlistRequest) (booking.WaitlistPlan, error)
	JoinWaitlist(ctx context.Context, tx booking.WaitlistTx, p booking.WaitlistPlan) (store.WaitlistEntry, error)
	SlotFreed(ctx context.Context, tx booking.FreedTx, freed store.Booking) (*booking.Offered, error)
	SpanFreed(ctx context.Context, tx booking.SpanTx, businessID, staffID string, from, to time.Time) ([]booking.Offered, error)
	PlanBusiness(ctx context.Context, r booking.BusinessRequest) (booking.BusinessPlan, error)
	ApplyBusiness(ctx context.Context, tx booking.Tx, p booking.BusinessPlan) (store.Booking, error)
	DuePending(ctx context.Context, limit int) ([]store.Booking, error)
}

// Grants issues and verifies booking grants (*grant.Issuer).
type Grants interface {
	IssueFor(ctx context.Context, b store.Booking, linkID string) (string, error)
	Verify(ctx context.Context, token string, want grant.Expect) error
}

// Keeper runs a mutation at most once per (scope, operation, key), in one
// transaction seen as Tx (*idempotency.Keeper[Tx]).
type Keeper interface {
	Lookup(ctx context.Context, linkID, tool, key, argsHash string) (response []byte, found bool, err error)
	Run(ctx context.Context, linkID, tool, key, argsHash string, exec func(tx Tx) ([]byte, error)) (response []byte, replay bool, err error)
}

var (
	_ Engine = (*booking.Service)(nil)
	_ Grants = (*grant.Issuer)(nil)
	_ Keeper = (*idempotency.Keeper[Tx])(nil)
)

// Service is the mutation protocol. Engine and Keeper are required; Grants
// is required for agent callers.
type Service struct {
	Engine Engine
	Grants Grants
	Keeper Keeper
	// Notifier writes the change's messages in its transaction; nil sends
	// nothing.
	Notifier Notifier
	// Clock stamps Activity entries; nil means store.SystemClock.
	Clock store.Clock
	// Accounts reads the caller's account: a callback request's contact
	// address is the account's, never the agent's (required for
	// RequestCallback).
	Accounts AccountReader
	// CallbackLimit limits executed callback requests per link (or per
	// account on the web); nil: unlimited.
	CallbackLimit Limiter
	// InTx runs a transaction without an idempotency record: the expiry
	// job's declines (ExpirePending), which the booking's own state makes
	// happen once. Required for ExpirePending only.
	InTx func(ctx context.Context, fn func(tx Tx) error) error
}

// Transact runs fn in one transaction seen as Tx.
func (s *Service) Transact(ctx context.Context, fn func(tx Tx) error) error {
	if s.InTx == nil {
		return errors.New("mutation: no InTx to run a transaction in")
	}
	return s.InTx(ctx, fn)
}

// AccountReader reads accounts (store.Accounts).
type AccountReader interface {
	GetAccount(ctx context.Context, id string) (store.Account, error)
}

// Limiter is a per-key rate limit (resourceserver/internal/ratelimit, in
// process or shared by the replicas through the database).
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return store.UTC(store.SystemClock())
	}
	return store.UTC(s.Clock())
}

// call is one mutation's shared state.
type call struct {
	op     string
	c      Caller
	conf   Confirmation
	hash   string
	args   []byte // for the Activity entry: no grant, no confirmation fields
	verify bool   // all five confirmation fields present
}

// Errors of the protocol's own checks.
var (
	errNoAccount = errors.New("mutation: caller without an account")
	errNoLink    = problem.New(problem.CodeServerError, "This connection has no link to scope idempotency keys to. Reconnect the Linkslot account and retry.")
)

// Create books a service for the caller.
func (s *Service) Create(ctx context.Context, c Caller, r CreateRequest, conf Confirmation) (Outcome, error) {
	var err error
	if r.Notes, err = booking.CheckText("notes", r.Notes); err != nil {
		return Outcome{}, err
	}
	args := map[string]any{"business_reference": r.BusinessRef, "service_reference": r.ServiceRef,
		"staff_reference": r.StaffRef, "starts_at": instant(r.StartsAt)}
	if r.Notes != "" {
		args["notes"] = r.Notes
	}
	if r.OfferRef != "" {
		args["offer_reference"] = r.OfferRef
	}
	m, out, done, err := s.start(ctx, c, OpCreate, conf, args, args)
	if done || err != nil {
		return out, err
	}
	plan, err := s.Engine.PlanCreate(ctx, booking.CreateRequest{AccountID: c.AccountID, LinkID: c.LinkID,
		BusinessRef: r.BusinessRef, ServiceRef: r.ServiceRef, StaffRef: r.StaffRef, StartsAt: r.StartsAt, Notes: r.Notes,
		OfferRef: r.OfferRef})
	if err != nil {
		return s.failed(ctx, m, err)
	}
	return s.confirmOrExecute(ctx, m, plan.Facts, StatusConfirmed, func(tx Tx) (Change, error) {
		b, err := s.Engine.Create(ctx, tx, plan)
		return Change{Kind: KindCreated, After: b, Business: plan.Business()}, err
	})
}

// Reschedule moves one of the caller's bookings.
func (s *Service) Reschedule(ctx context.Context, c Caller, r RescheduleRequest, conf Confirmation) (Outcome, error) {
	args := map[string]any{"booking_reference": r.BookingRef, "grant": r.Grant, "requested_starts_at": instant(r.StartsAt)}
	if r.StaffRef != "" {
		args["with_staff_reference"] = r.StaffRef
	}
	m, out, done, err := s.start(ctx, c, OpReschedule, conf, args, without(args, "grant"))
	if done || err != nil {
		return out, err
	}
	version, err := s.verifyGrant(ctx, c, r.BookingRef, r.Grant, grant.ScopeReschedule)
	if err != nil {
		return s.failed(ctx, m, err)
	}
	plan, err := s.Engine.PlanReschedule(ctx, booking.RescheduleRequest{AccountID: c.AccountID, BookingRef: r.BookingRef,
		NewStartsAt: r.StartsAt, StaffRef: r.StaffRef})
	if err != nil {
		return s.failed(ctx, m, err)
	}
	if version != 0 && plan.Current.Version != version {
		return s.failed(ctx, m, grant.ErrInvalidGrant)
	}
	return s.confirmOrExecute(ctx, m, plan.Facts, StatusRescheduled, func(tx Tx) (Change, error) {
		b, err := s.Engine.Reschedule(ctx, tx, plan)
		if err != nil {
			return Change{}, err
		}
		before := plan.Current
		if before.StaffID != b.StaffID || !before.StartsAt.Equal(b.StartsAt) {
			if _, err := s.SlotFreed(ctx, tx, before); err != nil {
				return Change{}, err
			}
		}
		return Change{Kind: KindRescheduled, Before: &before, After: b, Business: plan.Business()}, nil
	})
}

// Cancel cancels one of the caller's bookings. A booking already cancelled
// answers StatusCancelled with AlreadyCancelled, in either step, and records
// nothing — also when a concurrent cancel commits between this one's plan
// and its write.
func (s *Service) Cancel(ctx context.Context, c Caller, r CancelRequest, conf Confirmation) (Outcome, error) {
	var err error
	if r.Reason, err = booking.CheckText("reason", r.Reason); err != nil {
		return Outcome{}, err
	}
	args := map[string]any{"booking_reference": r.BookingRef, "grant": r.Grant}
	if r.Reason != "" {
		args["reason"] = r.Reason
	}
	m, out, done, err := s.start(ctx, c, OpCancel, conf, args, without(args, "grant"))
	if done || err != nil {
		return out, err
	}
	version, err := s.verifyGrant(ctx, c, r.BookingRef, r.Grant, grant.ScopeCancel)
	if err != nil {
		return s.failed(ctx, m, err)
	}
	plan, err := s.Engine.PlanCancel(ctx, booking.CancelRequest{AccountID: c.AccountID, BookingRef: r.BookingRef, Reason: r.Reason})
	if err != nil {
		return s.failed(ctx, m, err)
	}
	if version != 0 && plan.Current.Version != version {
		return s.failed(ctx, m, grant.ErrInvalidGrant)
	}
	if plan.AlreadyCancelled {
		// Nothing to change, so nothing to confirm or record (unless this
		// is a retry of the call that cancelled it).
		if out, ok := s.lateReplay(ctx, m); ok {
			return out, nil
		}
		g, err := s.grantFor(ctx, c, plan.Current)
		if err != nil {
			return s.failed(ctx, m, err)
		}
		v := viewOf(plan.Facts, plan.Current)
		return Outcome{Status: StatusCancelled, AlreadyCancelled: true, Booking: &v, Grant: g}, nil
	}
	out, err = s.confirmOrExecute(ctx, m, plan.Facts, StatusCancelled, func(tx Tx) (Change, error) {
		// A booking cancelled by a concurrent request since the plan
		// answers the engine's already_cancelled error (nothing changed).
		b, err := s.Engine.Cancel(ctx, tx, plan)
		if err != nil {
			return Change{}, err
		}
		before := plan.Current
		if _, err := s.SlotFreed(ctx, tx, before); err != nil {
			return Change{}, err
		}
		return Change{Kind: KindCancelled, Before: &before, After: b, Business: plan.Business()}, nil
	})
	if problem.CodeOf(err) == problem.CodeAlreadyCancelled {
		// Another cancel won the race: answered as a cancel of a booking
		// already cancelled, so already_cancelled means one thing
		// (docs/reference.md §5): cancelled before this call, nothing
		// changed, nothing stored under the key.
		return s.alreadyCancelled(ctx, c, r.BookingRef)
	}
	return out, err
}

// alreadyCancelled answers a cancel that found the booking cancelled.
func (s *Service) alreadyCancelled(ctx context.Context, c Caller, ref string) (Outcome, error) {
	v, err := s.Engine.MyBooking(ctx, c.AccountID, ref)
	if err != nil {
		return Outcome{}, protocolError(c, err)
	}
	g, err := s.grantFor(ctx, c, v.Record)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: StatusCancelled, AlreadyCancelled: true, Booking: &v, Grant: g}, nil
}

// instant is the canonical form of a requested instant in the arguments
// hash and the Activity entry: RFC 3339 with the offset it was given in.
func instant(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// start runs steps 2–3: a malformed confirmation field fails, and a used key
// replays or conflicts. done reports that out is the answer.
func (s *Service) start(ctx context.Context, c Caller, name string, conf Confirmation, hashArgs, activityArgs map[string]any) (m *call, out Outcome, done bool, err error) {
	if c.AccountID == "" {
		return nil, Outcome{}, true, errNoAccount
	}
	m = &call{op: c.op(name), c: c, conf: conf}
	r := confirm.CheckFields(conf)
	if r.Kind == confirm.InvalidField {
		return nil, Outcome{}, true, r.Err()
	}
	if m.hash, err = idempotency.ArgsHash(hashArgs); err != nil {
		return nil, Outcome{}, true, err
	}
	if m.args, err = json.Marshal(activityArgs); err != nil {
		return nil, Outcome{}, true, fmt.Errorf("mutation: activity arguments: %w", err)
	}
	if r.Kind != confirm.Execute {
		return m, Outcome{}, false, nil
	}
	m.verify = true
	if c.scope() == "" {
		return nil, Outcome{}, true, errNoLink
	}
	raw, found, err := s.Keeper.Lookup(ctx, c.scope(), m.op, *conf.IdempotencyKey, m.hash)
	if err != nil {
		return nil, Outcome{}, true, protocolError(c, err)
	}
	if found {
		out, err := replayed(raw)
		return nil, out, true, err
	}
	return m, Outcome{}, false, nil
}

// failed answers a failure after step 3, unless a late lookup of the key
// finds the answer of the call this one duplicates.
func (s *Service) failed(ctx context.Context, m *call, err error) (Outcome, error) {
	if out, ok := s.lateReplay(ctx, m); ok {
		return out, nil
	}
	return Outcome{}, protocolError(m.c, err)
}

func (s *Service) lateReplay(ctx context.Context, m *call) (Outcome, bool) {
	if !m.verify {
		return Outcome{}, false
	}
	raw, found, err := s.Keeper.Lookup(ctx, m.c.scope(), m.op, *m.conf.IdempotencyKey, m.hash)
	if err != nil || !found {
		return Outcome{}, false
	}
	out, err := replayed(raw)
	return out, err == nil
}

// protocolError is what a failure answers. The grant's, the keeper's and
// the engine's failures are already *problem.Error values; the one
// translation left is booking_changed for an agent: the booking moved on
// between the grant check and the write, so the grant it presented is
// superseded, and every invalid grant answers the same. A person on the web
// sees booking_changed itself.
func protocolError(c Caller, err error) error {
	if c.agent() && problem.CodeOf(err) == problem.CodeBookingChanged {
		return grant.ErrInvalidGrant
	}
	return err
}

// verifyGrant checks an agent's grant against the booking as it is now
// (step 4) and returns that booking's version; a web caller presents none
// (version 0).
func (s *Service) verifyGrant(ctx context.Context, c Caller, ref, token, scope string) (int, error) {
	if !c.agent() {
		return 0, nil
	}
	if s.Grants == nil {
		return 0, errors.New("mutation: no grant issuer for an agent caller")
	}
	v, err := s.Engine.MyBooking(ctx, c.AccountID, ref)
	if err != nil {
		return 0, err
	}
	if c.LinkID == "" {
		return 0, grant.ErrInvalidGrant
	}
	b := v.Record
	if err := s.Grants.Verify(ctx, token, grant.Expect{BookingID: b.ID, BusinessID: b.BusinessID,
		LinkID: c.LinkID, Version: b.Version, Scope: scope}); err != nil {
		return 0, err
	}
	return b.Version, nil
}

// grantFor is b's current grant for an agent caller's link; web callers get
// none.
func (s *Service) grantFor(ctx context.Context, c Caller, b store.Booking) (string, error) {
	if !c.agent() {
		return "", nil
	}
	if s.Grants == nil {
		return "", errors.New("mutation: no grant issuer for an agent caller")
	}
	return s.Grants.IssueFor(ctx, b, c.LinkID)
}

// confirmOrExecute runs steps 6–7 once the plan's facts are known. exec
// performs the change through tx and describes it.
func (s *Service) confirmOrExecute(ctx context.Context, m *call, facts booking.Facts, status string,
	exec func(tx Tx) (Change, error)) (Outcome, error) {
	summary, err := confirm.ForBooking(facts)
	if err != nil {
		return Outcome{}, err
	}
	return s.decide(ctx, m, summary, Outcome{Facts: facts}, nil, func(tx Tx) (Outcome, error) {
		ch, err := exec(tx)
		if err != nil {
			return Outcome{}, err
		}
		g, err := s.grantFor(ctx, m.c, ch.After)
		if err != nil {
			return Outcome{}, err
		}
		v := viewOf(facts, ch.After)
		st := status
		if ch.Kind == KindCreated && ch.After.Status == store.BookingPending {
			// The service requires the business's confirmation.
			st = StatusPending
		}
		out := Outcome{Status: st, Summary: summary, Booking: &v, Grant: g}
		if s.Notifier != nil {
			if ch.Person, err = tx.GetAccount(ctx, ch.After.AccountID); err != nil {
				return Outcome{}, fmt.Errorf("mutation: the booking's account: %w", err)
			}
			ch.Caller, ch.Facts, ch.Summary = m.c, facts, summary
			n, err := s.Notifier.Notify(ctx, tx, ch)
			if err != nil {
				return Outcome{}, fmt.Errorf("mutation: notify: %w", err)
			}
			out.Notified = &n
		}
		return out, nil
	})
}

// decide runs steps 6–7 of any mutation once its summary is known: a
// preview, missing fields or a changed summary answer without a write
// (preview carries the facts to show); otherwise gate (a rate limit; nil:
// none) may refuse, and run performs the change in the Keeper's
// transaction, which also writes the Activity entry and the idempotency
// record.
func (s *Service) decide(ctx context.Context, m *call, summary string, preview Outcome, gate func() error,
	run func(tx Tx) (Outcome, error)) (Outcome, error) {
	r := confirm.Check(m.conf, summary)
	switch r.Kind {
	case confirm.Preview:
		preview.Status, preview.Summary, preview.Message = StatusConfirmationRequired, summary, r.Message
		return preview, nil
	case confirm.ConfirmationRequired, confirm.SummaryChanged:
		if out, ok := s.lateReplay(ctx, m); ok {
			return out, nil
		}
		preview.Status, preview.Summary, preview.Missing, preview.Message = r.Code, summary, r.Missing, r.Message
		return preview, nil
	case confirm.InvalidField:
		return Outcome{}, r.Err()
	}
	if gate != nil {
		if err := gate(); err != nil {
			return s.failed(ctx, m, err)
		}
	}
	key, text := *m.conf.IdempotencyKey, *m.conf.UserConfirmationText
	var out Outcome
	raw, replay, err := s.Keeper.Run(ctx, m.c.scope(), m.op, key, m.hash, func(tx Tx) ([]byte, error) {
		var err error
		if out, err = run(tx); err != nil {
			return nil, err
		}
		out.Summary = summary
		resp, err := json.Marshal(storedOf(out))
		if err != nil {
			return nil, err
		}
		noGrant := out
		noGrant.Grant = "" // the Activity page never shows a capability
		outcome, err := json.Marshal(storedOf(noGrant))
		if err != nil {
			return nil, err
		}
		if err := tx.AddActivity(ctx, store.Activity{AccountID: m.c.AccountID, LinkID: m.c.LinkID, ClientID: m.c.ClientID,
			Via: m.c.via(), Tool: m.op, Arguments: m.args, Summary: summary, ConfirmationText: text, IdempotencyKey: key,
			Outcome: outcome, RequestID: m.c.RequestID, CreatedAt: s.now()}); err != nil {
			return nil, fmt.Errorf("activity: %w", err)
		}
		return resp, nil
	})
	if err != nil {
		return s.failed(ctx, m, err)
	}
	if replay {
		return replayed(raw)
	}
	return out, nil
}

// viewOf renders a booking written by a mutation with the names its plan
// already resolved, so the answer needs no read outside the transaction.
func viewOf(f booking.Facts, b store.Booking) booking.BookingView { return booking.ViewFromFacts(f, b) }

// stored is an executed Outcome as the idempotency record and the Activity
// entry keep it. Its member names are those of the MCP answer, so records
// written before this form existed decode the same.
type stored struct {
	Status           string                `json:"status"`
	ConfirmedSummary string                `json:"confirmed_summary,omitempty"`
	Booking          *storedBooking        `json:"booking,omitempty"`
	Callback         *CallbackView         `json:"callback,omitempty"`
	Waitlist         *booking.WaitlistView `json:"waitlist,omitempty"`
	AlreadyCancelled bool                  `json:"already_cancelled,omitempty"`
	Notified         *Notified             `json:"notified,omitempty"`
}

type storedBooking struct {
	booking.BookingView
	Grant string `json:"grant,omitempty"`
}

func storedOf(o Outcome) stored {
	s := stored{Status: o.Status, ConfirmedSummary: o.Summary, AlreadyCancelled: o.AlreadyCancelled, Notified: o.Notified,
		Callback: o.Callback, Waitlist: o.Waitlist}
	if o.Booking != nil {
		s.Booking = &storedBooking{BookingView: *o.Booking, Grant: o.Grant}
	}
	return s
}

// replayed decodes a stored answer into the Outcome of a replay.
func replayed(raw []byte) (Outcome, error) {
	var s stored
	if err := json.Unmarshal(raw, &s); err != nil {
		return Outcome{}, fmt.Errorf("mutation: stored answer: %w", err)
	}
	o := Outcome{Status: s.Status, Summary: s.ConfirmedSummary, AlreadyCancelled: s.AlreadyCancelled, Notified: s.Notified, Replay: true,
		Callback: s.Callback, Waitlist: s.Waitlist}
	if s.Booking != nil {
		v := s.Booking.BookingView
		o.Booking, o.Grant = &v, s.Booking.Grant
	}
	return o, nil
}
