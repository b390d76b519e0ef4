// Package callbacks is a business's inbox of callback requests
// (docs/reference.md §16 "Callback requests"): the requests people asked for
// through their agents (request_business_callback, written by
// internal/mutation), listed with the person's contact details as their
// account has them now — never an address an agent wrote — and marked
// done by the business, which tells the person by e-mail in the same
// transaction and is audited.
//
// The business console (/business) lists Open and calls MarkDone; who may
// see a business's inbox (its owners and staff) is the console's decision.
package callbacks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Store is what the inbox reads, and runs its transaction on.
type Store interface {
	ListCallbackRequests(ctx context.Context, businessID, status string, limit int) ([]store.CallbackRequest, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
	InTx(ctx context.Context, fn func(store.Store) error) error
}

// Tx is what marking a request done reaches in its transaction: the
// request, the person's account, the e-mail telling them and the audit
// event.
type Tx interface {
	MarkCallbackDone(ctx context.Context, businessID, reference, by string, at time.Time) (store.CallbackRequest, error)
	GetAccount(ctx context.Context, id string) (store.Account, error)
	EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error
	AddAuditEvent(ctx context.Context, e store.AuditEvent) error
}

var _ Tx = store.Store(nil)

// Queue is the outbox a Notifier writes the person's e-mail into.
type Queue interface {
	EnqueueMessages(ctx context.Context, ms ...store.OutboxMessage) error
}

// Notifier tells the person their request was handled (*notify.Notifier).
type Notifier interface {
	CallbackDone(ctx context.Context, tx Queue, r store.CallbackRequest, business store.Business, person store.Account) (bool, error)
}

// Inbox is a business's callback requests.
type Inbox struct {
	Store    Store
	Notifier Notifier    // nil: the person is not told
	Clock    store.Clock // default store.SystemClock
}

// Item is one request as the business sees it.
type Item struct {
	Reference      string
	Topic          string
	PreferredTimes string
	Notes          string
	Status         string
	CreatedAt      time.Time
	DoneAt         *time.Time
	// CustomerName and CustomerEmail are the account's (store.CustomerOf):
	// "Deleted account" and no address once the account is erased.
	CustomerName  string
	CustomerEmail string
}

func (in *Inbox) now() time.Time {
	if in.Clock == nil {
		return store.UTC(store.SystemClock())
	}
	return store.UTC(in.Clock())
}

func (in *Inbox) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return in.Store.InTx(ctx, func(tx store.Store) error { return fn(tx) })
}

// Open lists a business's open requests, oldest first (at most limit; 0:
// 50).
func (in *Inbox) Open(ctx context.Context, businessID string, limit int) ([]Item, error) {
	rs, err := in.Store.ListCallbackRequests(ctx, businessID, store.CallbackOpen, limit)
	if err != nil {
		return nil, fmt.Errorf("callbacks: list: %w", err)
	}
	out := make([]Item, 0, len(rs))
	for _, r := range rs {
		acct, err := in.Store.GetAccount(ctx, r.AccountID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("callbacks: account: %w", err)
		}
		name, email := store.CustomerOf(acct)
		out = append(out, Item{Reference: r.Reference, Topic: r.Topic, PreferredTimes: r.PreferredTimes, Notes: r.Notes,
			Status: r.Status, CreatedAt: r.CreatedAt, DoneAt: r.DoneAt, CustomerName: name, CustomerEmail: email})
	}
	return out, nil
}

// MarkDone marks one open request of the business done on behalf of the
// member byAccountID, tells the person and writes the audit event, all in
// one transaction. Another business's request, or none, answers not_found;
// one already done answers conflict and changes nothing.
func (in *Inbox) MarkDone(ctx context.Context, business store.Business, reference, byAccountID, requestID string) (store.CallbackRequest, error) {
	var out store.CallbackRequest
	err := in.inTx(ctx, func(tx Tx) error {
		now := in.now()
		r, err := tx.MarkCallbackDone(ctx, business.ID, reference, byAccountID, now)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return problem.New(problem.CodeNotFound, "No callback request of this business has that reference.")
		case errors.Is(err, store.ErrConflict):
			return problem.New(problem.CodeConflict, "This callback request is already marked done.")
		case err != nil:
			return fmt.Errorf("callbacks: mark done: %w", err)
		}
		if in.Notifier != nil {
			person, err := tx.GetAccount(ctx, r.AccountID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("callbacks: account: %w", err)
			}
			if _, err := in.Notifier.CallbackDone(ctx, tx, r, business, person); err != nil {
				return fmt.Errorf("callbacks: notify: %w", err)
			}
		}
		after, _ := json.Marshal(map[string]string{"business": business.Reference, "status": r.Status})
		if err := tx.AddAuditEvent(ctx, store.AuditEvent{ID: store.NewID("aud"), ActorID: byAccountID, Action: "callback.done",
			Target: r.Reference, After: after, RequestID: requestID, CreatedAt: now}); err != nil {
			return fmt.Errorf("callbacks: audit: %w", err)
		}
		out = r
		return nil
	})
	return out, err
}
