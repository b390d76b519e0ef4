// Package outbox delivers the messages that mutations write into the
// transactional outbox (docs/reference.md §11).
//
// A message is written in the same transaction as the change it tells of,
// so it exists exactly when the change does: a crash after the commit loses
// nothing, because the message is already in the database, and a rollback
// leaves none. Every server process runs a Worker. A worker leases a batch of
// due messages (FOR UPDATE SKIP LOCKED on PostgreSQL, the database write lock
// on SQLite), which counts an attempt, delivers them at the same time, each
// through its channel's Deliverer within half the lease, and records each
// outcome while it still holds the lease:
//
//   - delivered: done;
//   - a failure before the message is 24 hours old: queued again after an
//     exponential backoff with jitter (the first retry 5–10 s later, then
//     doubling to at most an hour; never past the 24-hour mark);
//   - a failure at or after 24 hours: failed, shown to administrators, who
//     can replay it (it keeps its id, which is its webhook-id).
//
// Delivery is at least once: a process that dies holding a lease gives the
// message up when the lease expires (Lease, default 1 minute, well above a
// delivery's own timeout), and another worker delivers it again. A lease is
// identified by its owner and attempt number, so the late finish of an
// expired lease cannot overwrite the outcome of the attempt that took over.
package outbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store"
)

// Result is the outcome of one delivery attempt.
type Result struct {
	OK         bool
	StatusCode int   // webhook: the HTTP status (0: no answer)
	Err        error // why it failed; never holds a secret
	// Permanent marks a failure no retry can fix (the endpoint was
	// deleted, the message cannot be decoded): failed at once.
	Permanent bool
}

// Deliverer delivers messages of one channel.
type Deliverer interface {
	Deliver(ctx context.Context, m store.OutboxMessage) Result
}

// DeliverFunc adapts a function to Deliverer.
type DeliverFunc func(ctx context.Context, m store.OutboxMessage) Result

// Deliver calls f.
func (f DeliverFunc) Deliver(ctx context.Context, m store.OutboxMessage) Result { return f(ctx, m) }

// Defaults of Worker's zero fields.
const (
	DefaultLease    = time.Minute
	DefaultPoll     = time.Second
	DefaultBatch    = 16
	DefaultDeadline = 24 * time.Hour
)

// Worker delivers outbox messages. Zero optional fields take the defaults.
type Worker struct {
	Store store.Outbox // required
	// Channels are the deliverers by channel. The worker leases messages
	// of these channels only and leaves the others to a process that can
	// deliver them (none: it leases nothing).
	Channels map[string]Deliverer
	Owner    string      // lease owner (default: host, pid and a random suffix)
	Clock    store.Clock // default store.SystemClock
	// Rand returns a number in [0, 1) for the jitter (default crypto/rand).
	Rand     func() float64
	Lease    time.Duration // DefaultLease
	Poll     time.Duration // DefaultPoll: how often to look for due messages
	Batch    int           // DefaultBatch
	Deadline time.Duration // DefaultDeadline: retried for this long, then failed
	Metrics  *Metrics      // nil: off
	Logger   *slog.Logger  // default: discard

	once     sync.Once
	wake     chan struct{}
	channels []string // the keys of Channels, what RunOnce leases
}

func (w *Worker) init() {
	w.once.Do(func() {
		if w.Owner == "" {
			w.Owner = store.LeaseHolder()
		}
		if w.Clock == nil {
			w.Clock = store.SystemClock
		}
		if w.Rand == nil {
			w.Rand = cryptoFloat
		}
		if w.Lease <= 0 {
			w.Lease = DefaultLease
		}
		if w.Poll <= 0 {
			w.Poll = DefaultPoll
		}
		if w.Batch <= 0 {
			w.Batch = DefaultBatch
		}
		if w.Deadline <= 0 {
			w.Deadline = DefaultDeadline
		}
		if w.Logger == nil {
			w.Logger = slog.New(slog.DiscardHandler)
		}
		w.wake = make(chan struct{}, 1)
		w.channels = slices.Sorted(maps.Keys(w.Channels))
	})
}

// Nudge makes a running worker look for due messages now (after a commit
// that queued some), instead of at its next poll.
func (w *Worker) Nudge() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	t := time.NewTicker(w.Poll)
	defer t.Stop()
	gauge := time.Time{}
	failures := 0
	for {
		for {
			n, err := w.RunOnce(ctx)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
					return // the process is stopping
				}
				failures++
				w.Logger.WarnContext(ctx, "outbox: lease messages", "err", err)
				// A database that is down is asked less and less often,
				// up to every 30 s.
				wait := min(time.Duration(failures)*w.Poll, 30*time.Second)
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				break
			}
			failures = 0
			if n < w.Batch {
				break
			}
		}
		if w.Metrics != nil && time.Since(gauge) > 15*time.Second {
			gauge = time.Now()
			w.Metrics.refresh(ctx, w.Store)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.wake:
		}
	}
}

// RunOnce leases one batch of due messages and delivers them, all at the
// same time, each within half the lease: delivered one after the other, a
// batch of slow receivers would outlive its lease, and another worker
// would send the rest again. It reports how many it leased.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	w.init()
	if len(w.channels) == 0 {
		return 0, nil
	}
	ms, err := w.Store.LeaseMessages(ctx, w.Owner, w.Clock(), w.Lease, w.Batch, w.channels...)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.deliver(ctx, m)
		}()
	}
	wg.Wait()
	return len(ms), nil
}

func (w *Worker) deliver(ctx context.Context, m store.OutboxMessage) {
	start := w.Clock()
	// Only messages of w.Channels are leased.
	dctx, cancel := context.WithTimeout(ctx, w.Lease/2)
	res := w.Channels[m.Channel].Deliver(dctx, m)
	cancel()
	now := w.Clock()
	a := store.DeliveryAttempt{MessageID: m.ID, Attempt: m.Attempts, OK: res.OK, StatusCode: res.StatusCode,
		Duration: now.Sub(start), At: now}
	var retryAt time.Time
	outcome := "delivered"
	if !res.OK {
		if res.Err == nil {
			res.Err = errors.New("delivery failed")
		}
		a.Error = res.Err.Error()
		outcome = "failed"
		if !res.Permanent {
			if r, ok := RetryAt(m.CreatedAt, now, m.Attempts, w.Deadline, w.Rand()); ok {
				retryAt, outcome = r, "retried"
			}
		}
	}
	// The outcome is recorded even when ctx is ending: a delivered message
	// left queued would be delivered again by the next lease.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := w.Store.FinishAttempt(fctx, w.Owner, a, retryAt)
	switch {
	case errors.Is(err, store.ErrConflict):
		w.Logger.WarnContext(ctx, "outbox: lease lost before the outcome was recorded", "message", m.ID, "channel", m.Channel)
		return
	case err != nil:
		w.Logger.ErrorContext(ctx, "outbox: record outcome", "message", m.ID, "err", err)
		return
	}
	w.Metrics.observe(m.Channel, outcome)
	lvl := slog.LevelInfo
	if !res.OK {
		lvl = slog.LevelWarn
	}
	w.Logger.Log(ctx, lvl, "outbox delivery", "message", m.ID, "channel", m.Channel, "topic", m.Topic,
		"attempt", m.Attempts, "outcome", outcome, "status", res.StatusCode, "err", a.Error)
}

// Backoff is the wait after the attempt-th failed attempt, before jitter:
// 10 s doubling per attempt, at most an hour. The wait used is between half
// of it and all of it (jitter in [0, 1)), so the first retry comes 5–10 s
// after the first failure.
func Backoff(attempt int, jitter float64) time.Duration {
	base := 10 * time.Second
	max := time.Hour
	d := max
	if attempt < 20 {
		d = time.Duration(float64(base) * math.Pow(2, float64(attempt-1)))
		if d > max {
			d = max
		}
	}
	return d/2 + time.Duration(jitter*float64(d/2))
}

// RetryAt is when a message created at created, whose attempt-th attempt
// failed at now, is tried again; false when it is past its deadline (then it
// fails). The last retry is at the deadline itself.
func RetryAt(created, now time.Time, attempt int, deadline time.Duration, jitter float64) (time.Time, bool) {
	end := created.Add(deadline)
	if !now.Before(end) {
		return time.Time{}, false
	}
	next := now.Add(Backoff(attempt, jitter))
	if next.After(end) {
		next = end
	}
	return next, true
}

func cryptoFloat() float64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0.5
	}
	return float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53)
}

// Metrics counts deliveries by channel and outcome (delivered, retried,
// failed) and shows how many messages of each channel are queued and
// failed in the database (the delivered ones are what the counter counts).
type Metrics struct {
	attempts *prometheus.CounterVec
	messages *prometheus.GaugeVec
}

// NewMetrics registers the outbox collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_outbox_deliveries_total",
			Help: "Outbox delivery attempts by this process, by channel (email, webhook, calendar) and outcome (delivered, retried, failed).",
		}, []string{"channel", "outcome"}),
		messages: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "linkslot_outbox_messages",
			Help: "Outbox messages in the database not delivered, by channel and status (queued: still to be sent; failed: given up on); refreshed every 15 s.",
		}, []string{"channel", "status"}),
	}
	for _, c := range []string{store.ChannelEmail, store.ChannelWebhook, store.ChannelCalendar} {
		for _, o := range []string{"delivered", "retried", "failed"} {
			m.attempts.WithLabelValues(c, o)
		}
		for _, s := range []string{store.OutboxQueued, store.OutboxFailed} {
			m.messages.WithLabelValues(c, s)
		}
	}
	if reg != nil {
		// A second worker on the same registry (two servers in one
		// process) shares the first one's collectors.
		m.attempts = metrics.Shared(reg, m.attempts)
		m.messages = metrics.Shared(reg, m.messages)
	}
	return m
}

func (m *Metrics) observe(channel, outcome string) {
	if m == nil {
		return
	}
	if channel != store.ChannelEmail && channel != store.ChannelWebhook && channel != store.ChannelCalendar {
		channel = "other"
	}
	m.attempts.WithLabelValues(channel, outcome).Inc()
}

func (m *Metrics) refresh(ctx context.Context, s store.Outbox) {
	counts, err := s.CountUndelivered(ctx)
	if err != nil {
		return
	}
	for _, c := range []string{store.ChannelEmail, store.ChannelWebhook, store.ChannelCalendar} {
		for _, st := range []string{store.OutboxQueued, store.OutboxFailed} {
			m.messages.WithLabelValues(c, st).Set(0)
		}
	}
	for _, c := range counts {
		m.messages.WithLabelValues(c.Channel, c.Status).Set(float64(c.N))
	}
}

// Counter is the delivery counter of a channel and outcome (tests).
func (m *Metrics) Counter(channel, outcome string) prometheus.Counter {
	return m.attempts.WithLabelValues(channel, outcome)
}

// Refresh updates the message gauges now (tests and admin pages).
func (m *Metrics) Refresh(ctx context.Context, s store.Outbox) {
	if m != nil {
		m.refresh(ctx, s)
	}
}
