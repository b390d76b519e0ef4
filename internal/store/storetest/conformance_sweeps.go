package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// sweeps returns s as store.Sweeps, failing the test if it is not one.
func sweeps(t *testing.T, s store.Store) store.Sweeps {
	t.Helper()
	sw, ok := s.(store.Sweeps)
	if !ok {
		t.Fatalf("%T does not implement store.Sweeps", s)
	}
	return sw
}

// sweepBatches runs sweep with a limit of 2 until it deletes nothing, and
// fails unless the batches deleted 2, 2, …, then the rest, then 0: want
// rows in all, deleted a bounded batch at a time.
func sweepBatches(t *testing.T, name string, want int64, sweep func(limit int) (int64, error)) {
	t.Helper()
	for left := want; ; left -= 2 {
		n, err := sweep(2)
		must(t, err)
		if exp := min(max(left, 0), 2); n != exp {
			t.Fatalf("%s batch deleted %d, want %d", name, n, exp)
		}
		if n == 0 {
			return
		}
	}
}

// testSweepAccountTokens: the e-mail link sweep deletes only links expired
// before the cut-off, used or not, at most limit at a time.
func testSweepAccountTokens(t *testing.T, s store.Store) {
	sw := sweeps(t, s)
	a := newAccount(t, s, "sweeps@example.com")
	for i := range 3 {
		tok := store.AccountToken{TokenHash: fmt.Sprintf("sweep-old-%d", i), AccountID: a.ID, Purpose: store.TokenResetPassword,
			Email: a.Email, CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute)}
		must(t, s.CreateAccountToken(ctx, tok))
	}
	must(t, s.UseAccountToken(ctx, "sweep-old-0", t0.Add(time.Minute)))
	must(t, s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "sweep-live", AccountID: a.ID, Purpose: store.TokenVerifyEmail,
		Email: a.Email, CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}))

	sweepBatches(t, "SweepAccountTokens", 3, func(limit int) (int64, error) { return sw.SweepAccountTokens(ctx, t0.Add(time.Hour), limit) })
	for i := range 3 {
		if _, err := s.GetAccountToken(ctx, fmt.Sprintf("sweep-old-%d", i)); err == nil {
			t.Errorf("expired e-mail link %d survived the sweep", i)
		}
	}
	if _, err := s.GetAccountToken(ctx, "sweep-live"); err != nil {
		t.Errorf("the sweep removed a live e-mail link: %v", err)
	}
}

// testSweepWebSessions: the sign-in session sweep deletes only sessions
// expired before the cut-off, at most limit at a time; a live session
// still signs its person in.
func testSweepWebSessions(t *testing.T, s store.Store) {
	sw := sweeps(t, s)
	a := newAccount(t, s, "sessions-sweep@example.com")
	for i := range 3 {
		must(t, s.CreateWebSession(ctx, store.WebSession{IDHash: fmt.Sprintf("ws-old-%d", i), AccountID: a.ID,
			CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}))
	}
	must(t, s.CreateWebSession(ctx, store.WebSession{IDHash: "ws-live", AccountID: a.ID, CreatedAt: t0.Add(6 * time.Hour),
		ExpiresAt: t0.Add(18 * time.Hour)}))

	sweepBatches(t, "SweepWebSessions", 3, func(limit int) (int64, error) {
		return sw.SweepWebSessions(ctx, t0.Add(13*time.Hour), limit)
	})
	for i := range 3 {
		if _, err := s.GetWebSession(ctx, fmt.Sprintf("ws-old-%d", i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired session %d after the sweep: %v, want ErrNotFound", i, err)
		}
	}
	if _, err := s.GetWebSession(ctx, "ws-live"); err != nil {
		t.Errorf("the sweep removed a live session: %v", err)
	}
}

// testSweepOutbox: the outbox sweep deletes delivered and failed messages
// queued before the cut-off, with their delivery attempts, at most limit at
// a time, and never a queued message or a newer one.
func testSweepOutbox(t *testing.T, s store.Store) {
	sw := sweeps(t, s)
	msg := func(id, status string, created, next time.Time) store.OutboxMessage {
		return store.OutboxMessage{ID: id, Channel: store.ChannelEmail, Topic: "booking.created", Recipient: "ada@example.com",
			Payload: []byte(`{}`), Status: status, CreatedAt: created, NextAttemptAt: next}
	}
	must(t, s.EnqueueMessages(ctx,
		msg("sweep-msg-0", store.OutboxQueued, t0, t0),
		msg("sweep-msg-1", store.OutboxFailed, t0, t0.Add(48*time.Hour)),
		msg("sweep-msg-2", store.OutboxDelivered, t0, t0.Add(48*time.Hour)),
		msg("sweep-msg-queued", store.OutboxQueued, t0, t0.Add(48*time.Hour)),
		msg("sweep-msg-new", store.OutboxDelivered, t0.Add(2*time.Hour), t0.Add(48*time.Hour))))
	// sweep-msg-0 is delivered by a worker, so it has an attempt.
	leased, err := s.LeaseMessages(ctx, "sweeper-test", t0, time.Minute, 10)
	must(t, err)
	if len(leased) != 1 || leased[0].ID != "sweep-msg-0" {
		t.Fatalf("leased %+v, want sweep-msg-0 alone", leased)
	}
	must(t, s.FinishAttempt(ctx, "sweeper-test", store.DeliveryAttempt{MessageID: "sweep-msg-0", Attempt: leased[0].Attempts, OK: true, At: t0.Add(time.Second)}, time.Time{}))

	sweepBatches(t, "SweepOutbox", 3, func(limit int) (int64, error) { return sw.SweepOutbox(ctx, t0.Add(time.Hour), limit) })
	for i := range 3 {
		if _, err := s.GetMessage(ctx, fmt.Sprintf("sweep-msg-%d", i)); err == nil {
			t.Errorf("old finished message %d survived the sweep", i)
		}
	}
	if as, err := s.ListAttempts(ctx, "sweep-msg-0"); err != nil || len(as) != 0 {
		t.Errorf("attempts of a swept message: %v %v", as, err)
	}
	for _, id := range []string{"sweep-msg-queued", "sweep-msg-new"} {
		if _, err := s.GetMessage(ctx, id); err != nil {
			t.Errorf("the sweep removed %s: %v", id, err)
		}
	}
}
