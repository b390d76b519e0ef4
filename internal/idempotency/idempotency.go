package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/linkslot/linkslot/internal/confirm"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// MinTTL is the shortest time a record is kept.
const MinTTL = 24 * time.Hour

// RetryAfterSec is what a rate_limited answer tells the agent to wait.
const RetryAfterSec = 1

var (
	// ErrConflict: the key was already used, by this link for this tool,
	// with different arguments. Nothing was executed.
	ErrConflict = problem.New(problem.CodeIdempotencyConflict, "this idempotency_key was already used for a different request; "+
		"use a new key for a new request, or resend the original arguments unchanged to get the original answer").
		WithField(confirm.FieldIdempotencyKey)
	// ErrInProgress: a request with this key is still running.
	ErrInProgress = &problem.Error{Code: problem.CodeRateLimited, RetryAfterSec: RetryAfterSec,
		Message: "a request with this idempotency_key is still running; retry in a second with the same key and arguments"}
	// ErrInvalidKey: the key is not 16–200 printable ASCII characters.
	ErrInvalidKey = &problem.Error{Code: problem.CodeInvalidIdempotencyKey, Field: confirm.FieldIdempotencyKey,
		Message: "idempotency_key must be 16–200 printable ASCII characters"}
)

// ArgsHash returns the hex SHA-256 of the canonical JSON of a tool's
// arguments (a struct with JSON tags, or a map), leaving out the confirmation
// fields and null values. Object keys are sorted at every level and numbers
// keep their written form.
func ArgsHash(args any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("idempotency: encode arguments: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("idempotency: decode arguments: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		for _, f := range confirm.FieldNames {
			delete(m, f)
		}
	}
	canon, err := json.Marshal(dropNulls(v))
	if err != nil {
		return "", fmt.Errorf("idempotency: canonical arguments: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// dropNulls removes null members of objects at every level (an absent
// optional argument and an explicit null mean the same).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// Store is the part of store.Store the Keeper reads and purges through,
// outside the transactions it runs mutations in.
type Store interface {
	GetIdempotency(ctx context.Context, linkID, tool, key string) (store.IdempotencyRecord, error)
	PurgeIdempotency(ctx context.Context, before time.Time) (int64, error)
}

// Tx is what the Keeper itself writes in the transaction it runs a
// mutation in: the record it claims and completes. T, the transaction the
// mutation sees, embeds it (mutation.Tx): the record and the mutation's
// writes commit together.
type Tx interface {
	ClaimIdempotency(ctx context.Context, r store.IdempotencyRecord) (store.IdempotencyRecord, error)
	CompleteIdempotency(ctx context.Context, linkID, tool, key string, response []byte) error
}

var (
	_ Store = store.Store(nil)
	_ Tx    = store.Store(nil)
)

// Keeper runs mutations under idempotency keys, each in one transaction
// seen as T.
type Keeper[T Tx] struct {
	s     Store
	inTx  func(ctx context.Context, fn func(tx T) error) error
	clock store.Clock
	ttl   time.Duration
}

// New returns a Keeper over s whose transactions inTx begins, each seen as
// T: a store's InTx narrowed to what the mutation declares (mutation.InTx).
// ttl below MinTTL is raised to MinTTL; clock may be nil (system clock).
func New[T Tx](s Store, inTx func(ctx context.Context, fn func(tx T) error) error, clock store.Clock, ttl time.Duration) *Keeper[T] {
	if clock == nil {
		clock = store.SystemClock
	}
	if ttl < MinTTL {
		ttl = MinTTL
	}
	return &Keeper[T]{s: s, inTx: inTx, clock: clock, ttl: ttl}
}

// TTL reports how long records are kept.
func (k *Keeper[T]) TTL() time.Duration { return k.ttl }

// answer turns an existing record into Run's result.
func answer(rec store.IdempotencyRecord, argsHash string) ([]byte, error) {
	switch {
	case rec.ArgsHash != argsHash:
		return nil, ErrConflict
	case rec.State != store.IdemDone:
		return nil, ErrInProgress
	}
	return rec.Response, nil
}

// Lookup reports whether (link, tool, key) already has an answer: found with
// the stored response when it was used with the same arguments, ErrConflict
// when with others, ErrInProgress when still running. It writes nothing.
func (k *Keeper[T]) Lookup(ctx context.Context, linkID, tool, key, argsHash string) (response []byte, found bool, err error) {
	if !confirm.ValidKey(key) {
		return nil, false, ErrInvalidKey
	}
	rec, err := k.s.GetIdempotency(ctx, linkID, tool, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("idempotency: lookup: %w", err)
	}
	resp, err := answer(rec, argsHash)
	return resp, err == nil, err
}

// Run executes exec at most once per (link, tool, key). exec receives the
// transaction as T; everything it writes through it commits together with
// the idempotency record, or not at all.
//
// The first call with a key runs exec and, when exec succeeds, stores and
// returns its response (replay false). A later call with the same arguments
// returns the stored response with replay true and does not run exec. A
// call with other arguments answers ErrConflict. When exec fails, its error
// is returned unchanged (errors.As still finds a booking error), the
// transaction rolls back and no record is kept.
//
// When the database aborts the transaction as a deadlock victim or for a
// serialization failure (store.ErrRetry, PostgreSQL 40P01 / 40001: two
// exclusion-constraint checks of overlapping bookings waiting on each
// other), nothing was committed, and Run runs the whole transaction again,
// up to maxAttempts times in all; the retry then sees the other booking and
// fails cleanly (slot_taken) or succeeds. exec may therefore run more than
// once and must change nothing outside tx.
func (k *Keeper[T]) Run(ctx context.Context, linkID, tool, key, argsHash string,
	exec func(tx T) ([]byte, error)) (response []byte, replay bool, err error) {
	if linkID == "" || tool == "" || argsHash == "" {
		return nil, false, errors.New("idempotency: link, tool and arguments hash are required")
	}
	for attempt := 1; ; attempt++ {
		response, replay, err = k.runOnce(ctx, linkID, tool, key, argsHash, exec)
		if err == nil || attempt >= maxAttempts || !retryable(err) {
			return response, replay, err
		}
		// A short random pause, so that the transactions that deadlocked
		// do not meet again in the same order.
		pause := time.Duration(1+mathrand.IntN(10*attempt)) * time.Millisecond
		select {
		case <-ctx.Done():
			return response, replay, err
		case <-time.After(pause):
		}
	}
}

// maxAttempts bounds Run's transaction attempts.
const maxAttempts = 3

// retryable reports a transaction the database aborted as a deadlock victim
// or serialization failure (store.ErrRetry, which sqlstore sets for SQLSTATE
// 40P01 and 40001). Other conflicts (a booking changed since it was
// planned) are not retried.
func retryable(err error) bool { return errors.Is(err, store.ErrRetry) }

func (k *Keeper[T]) runOnce(ctx context.Context, linkID, tool, key, argsHash string,
	exec func(tx T) ([]byte, error)) (response []byte, replay bool, err error) {
	// Fast path: an answered key needs no write transaction.
	if resp, found, err := k.Lookup(ctx, linkID, tool, key, argsHash); err != nil || found {
		return resp, found, err
	}
	var execErr error
	err = k.inTx(ctx, func(tx T) error {
		now := k.clock()
		rec, err := tx.ClaimIdempotency(ctx, store.IdempotencyRecord{
			LinkID: linkID, Tool: tool, Key: key, ArgsHash: argsHash, State: store.IdemPending,
			CreatedAt: now, ExpiresAt: now.Add(k.ttl),
		})
		switch {
		case errors.Is(err, store.ErrAlreadyExists):
			// Another request committed this key first.
			response, err = answer(rec, argsHash)
			replay = err == nil
			return err
		case errors.Is(err, store.ErrNotFound):
			// Claimed by someone, then purged before we could read it.
			return ErrInProgress
		case err != nil:
			return fmt.Errorf("idempotency: claim: %w", err)
		}
		resp, err := exec(tx)
		if err != nil {
			response, execErr = resp, err
			return err
		}
		if err := tx.CompleteIdempotency(ctx, linkID, tool, key, resp); err != nil {
			return fmt.Errorf("idempotency: store answer: %w", err)
		}
		response = resp
		return nil
	})
	if execErr != nil {
		// exec's own error, unchanged (InTx may have translated it).
		return response, false, execErr
	}
	if err != nil {
		return nil, false, err
	}
	return response, replay, nil
}

// Purge deletes the records that expired before now and reports how many.
func (k *Keeper[T]) Purge(ctx context.Context) (int64, error) {
	n, err := k.s.PurgeIdempotency(ctx, k.clock())
	if err != nil {
		return n, fmt.Errorf("idempotency: purge: %w", err)
	}
	return n, nil
}

// WithReplayFlag returns a stored JSON object answer with
// "idempotent_replay": true added, for the answer of a replay.
func WithReplayFlag(response []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(response, &m); err != nil || m == nil {
		return nil, errors.New("idempotency: stored answer is not a JSON object")
	}
	m["idempotent_replay"] = json.RawMessage("true")
	return json.Marshal(m)
}
