package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		attempt  int
		jitter   float64
		min, max time.Duration
	}{
		{1, 0, 5 * time.Second, 5 * time.Second},
		{1, 0.999, 5 * time.Second, 10 * time.Second},
		{2, 0.5, 10 * time.Second, 20 * time.Second},
		{9, 0.999, 30 * time.Minute, time.Hour},
		{40, 0.999, 30 * time.Minute, time.Hour},
	} {
		if d := outbox.Backoff(c.attempt, c.jitter); d < c.min || d > c.max {
			t.Errorf("Backoff(%d, %v) = %s, want in [%s, %s]", c.attempt, c.jitter, d, c.min, c.max)
		}
	}
	created := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if at, ok := outbox.RetryAt(created, created, 1, 24*time.Hour, 0.999); !ok || at.Sub(created) > 30*time.Second {
		t.Errorf("first retry at +%s, want within 30 s", at.Sub(created))
	}
	last := created.Add(24*time.Hour - time.Minute)
	if at, ok := outbox.RetryAt(created, last, 30, 24*time.Hour, 0.5); !ok || !at.Equal(created.Add(24*time.Hour)) {
		t.Errorf("retry near the deadline at %s, want the deadline", at)
	}
	if _, ok := outbox.RetryAt(created, created.Add(24*time.Hour), 31, 24*time.Hour, 0.5); ok {
		t.Error("retried past 24 hours")
	}
}

// TestFailsAfter24Hours: a message that never gets through is retried with
// growing waits for 24 hours, then marked failed; replaying it queues it
// again under the same id, and the metrics count each outcome by channel.
func TestFailsAfter24Hours(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: "msg_doomed", Channel: store.ChannelEmail, Topic: "t",
			Recipient: "x@example.com", Payload: []byte(`{}`), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		ok := false
		reg := prometheus.NewRegistry()
		w := &outbox.Worker{Store: s, Clock: func() time.Time { return now }, Metrics: outbox.NewMetrics(reg),
			Channels: map[string]outbox.Deliverer{store.ChannelEmail: outbox.DeliverFunc(func(context.Context, store.OutboxMessage) outbox.Result {
				if ok {
					return outbox.Result{OK: true}
				}
				return outbox.Result{Err: errors.New("421 try later")}
			})}}
		attempts := 0
		for i := 0; i < 200; i++ {
			n, err := w.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			attempts += n
			m, _ := s.GetMessage(ctx, "msg_doomed")
			if m.Status == store.OutboxFailed {
				break
			}
			now = m.NextAttemptAt
		}
		m, _ := s.GetMessage(ctx, "msg_doomed")
		if m.Status != store.OutboxFailed || m.LastError != "421 try later" {
			t.Fatalf("after %d attempts: %+v", attempts, m)
		}
		if span := now.Sub(m.CreatedAt); span != 24*time.Hour {
			t.Errorf("last attempt %s after creation, want 24h", span)
		}
		if attempts < 20 || attempts > 60 {
			t.Errorf("%d attempts in 24 hours", attempts)
		}
		r, err := s.ReplayMessage(ctx, "msg_doomed", now)
		if err != nil || r.Status != store.OutboxQueued {
			t.Fatal(err)
		}
		ok = true
		if n, _ := w.RunOnce(ctx); n != 1 {
			t.Fatal("replayed message not leased")
		}
		if m, _ := s.GetMessage(ctx, "msg_doomed"); m.Status != store.OutboxDelivered {
			t.Fatalf("after replay: %+v", m)
		}
		c := func(outcome string) float64 {
			return testutil.ToFloat64(w.Metrics.Counter(store.ChannelEmail, outcome))
		}
		if c("failed") != 1 || c("retried") != float64(attempts-1) || c("delivered") != 1 {
			t.Errorf("metrics failed %v retried %v delivered %v (attempts %d)", c("failed"), c("retried"), c("delivered"), attempts)
		}
		w.Metrics.Refresh(ctx, s)
		if n, err := testutil.GatherAndCount(reg, "linkslot_outbox_messages"); err != nil || n != 6 {
			t.Errorf("message gauges: %d, %v", n, err)
		}
		// The six gauges (three channels) exist from the start; Refresh sets them from the
		// database: the one message is delivered, so nothing is owed.
		want := `# HELP linkslot_outbox_messages Outbox messages in the database not delivered, by channel and status (queued: still to be sent; failed: given up on); refreshed every 15 s.
# TYPE linkslot_outbox_messages gauge
linkslot_outbox_messages{channel="calendar",status="failed"} 0
linkslot_outbox_messages{channel="calendar",status="queued"} 0
linkslot_outbox_messages{channel="email",status="failed"} 0
linkslot_outbox_messages{channel="email",status="queued"} 0
linkslot_outbox_messages{channel="webhook",status="failed"} 0
linkslot_outbox_messages{channel="webhook",status="queued"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "linkslot_outbox_messages"); err != nil {
			t.Error(err)
		}
	})
}

// TestBatchDeliveredTogether: the messages of one lease are delivered at
// the same time, so a batch of slow receivers cannot outlive its lease.
// Each delivery here waits until every message of the batch has started
// (or its own deadline, half the lease): one after the other, the first
// would give up and fail.
func TestBatchDeliveredTogether(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		const n = 4
		for i := range n {
			if err := s.EnqueueMessages(ctx, store.OutboxMessage{ID: fmt.Sprintf("msg_%d", i), Channel: store.ChannelWebhook,
				Topic: "t", Payload: []byte(`{}`), CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		var started sync.WaitGroup
		started.Add(n)
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		w := &outbox.Worker{Store: s, Clock: func() time.Time { return now }, Lease: 4 * time.Second, Batch: n,
			Channels: map[string]outbox.Deliverer{store.ChannelWebhook: outbox.DeliverFunc(func(ctx context.Context, m store.OutboxMessage) outbox.Result {
				started.Done()
				select {
				case <-all:
					return outbox.Result{OK: true, StatusCode: 204}
				case <-ctx.Done():
					return outbox.Result{Err: errors.New("gave up waiting for the rest of the batch")}
				}
			})}}
		if got, err := w.RunOnce(ctx); err != nil || got != n {
			t.Fatalf("RunOnce: %d %v", got, err)
		}
		for i := range n {
			m, err := s.GetMessage(ctx, fmt.Sprintf("msg_%d", i))
			if err != nil || m.Status != store.OutboxDelivered || m.Attempts != 1 {
				t.Errorf("msg_%d: %+v %v", i, m, err)
			}
		}
	})
}

// TestLeasesOnlyItsChannels: a worker leases messages of the channels it
// has deliverers for and leaves the others queued for a process that can
// deliver them — a process with e-mail off never takes, and so never
// loses, an e-mail another process queued.
func TestLeasesOnlyItsChannels(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.EnqueueMessages(ctx,
			store.OutboxMessage{ID: "msg_mail", Channel: store.ChannelEmail, Topic: "t", Recipient: "x@example.com", Payload: []byte(`{}`), CreatedAt: now},
			store.OutboxMessage{ID: "msg_hook", Channel: store.ChannelWebhook, Topic: "t", Payload: []byte(`{}`), CreatedAt: now}))
		var got []string
		var mu sync.Mutex
		record := outbox.DeliverFunc(func(_ context.Context, m store.OutboxMessage) outbox.Result {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, m.ID)
			return outbox.Result{OK: true}
		})
		hooksOnly := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelWebhook: record}, Clock: clock, Owner: "hooks"}
		if n, err := hooksOnly.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("webhook-only worker leased %d (%v), want 1", n, err)
		}
		if m, _ := s.GetMessage(ctx, "msg_mail"); m.Status != store.OutboxQueued || m.Attempts != 0 || m.LeaseOwner != "" {
			t.Fatalf("the e-mail was touched by a worker without e-mail: %+v", m)
		}
		none := &outbox.Worker{Store: s, Clock: clock, Owner: "none"}
		if n, err := none.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("a worker without deliverers leased %d (%v)", n, err)
		}
		mailer := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelEmail: record}, Clock: clock, Owner: "mail"}
		if n, err := mailer.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("e-mail worker leased %d (%v), want 1", n, err)
		}
		if m, _ := s.GetMessage(ctx, "msg_mail"); m.Status != store.OutboxDelivered {
			t.Fatalf("the e-mail after the e-mail worker: %+v", m)
		}
		if strings.Join(got, " ") != "msg_hook msg_mail" {
			t.Fatalf("delivered %v", got)
		}
	})
}
