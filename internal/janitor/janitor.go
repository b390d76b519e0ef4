// Package janitor deletes the rows Linkslot no longer needs, in bounded
// batches, in every server process, without two replicas doing the same
// work and without holding up requests.
//
// The work is a list of Tasks, each a name and a Sweep that deletes at most
// a batch of due rows. Tasks returns the standard list; a part of the
// product with rows of its own to forget appends its Task (for example the
// used client-assertion jti's of private_key_jwt).
//
// What is deleted, and when (Tasks):
//
//   - token sessions of every kind (authorization codes, PKCE and OpenID
//     sessions, access tokens, refresh tokens), active or spent, once they
//     have been expired for Grace (1 h). A code lives 60 s and an access
//     token 15 min; a refresh token's expiry is its idle lifetime, capped at
//     its family's absolute lifetime, so a family past its absolute
//     lifetime goes entirely. The hour of grace keeps a spent code for
//     reuse detection (a replayed code revokes what it issued) well past
//     its lifetime. A spent refresh token is kept as long as it would
//     have been valid, since presenting it again is what reveals a stolen
//     family (docs/reference.md §2).
//   - idempotency records once expired (agents' calls live IdempotencyTTL,
//     48 h, past the 24 h of docs/reference.md §5; cancellations on the web the 24 h).
//   - used client-assertion ids (private_key_jwt jti's) once their
//     assertion has expired: an assertion past its exp is refused anyway.
//   - passkey ceremonies once expired (internal/passkey.CeremonyLifetime,
//     10 min): every page that offers a passkey starts one, and those
//     never finished would otherwise stay.
//   - sign-in sessions once expired (identity.SessionLifetime after
//     sign-in, 12 h by default): a session is deleted when it is presented
//     after that or its person signs out, and those never presented again
//     (a closed browser, a cleared cookie) would otherwise stay.
//   - e-mail links (verification and password reset), used or not, once
//     they have been expired for EmailLinkGrace (24 h). Until then a
//     person who opens an old link is told it expired or was used; after,
//     that it is not valid — both pages offer a new link. The resend
//     throttle counts only the last hour's links, which are never due.
//   - notifications (outbox messages and their delivery attempts) that
//     were delivered or failed, OutboxRetention (30 days) after they were
//     queued: the delivery log and the replay of a failed message reach
//     back that far. Their bodies hold addresses, names and notes, so they
//     are not kept for ever. A queued message is never swept.
//   - dynamically registered clients (internal/dcr) that nobody linked
//     within dcr.UnusedLifetime (24 h) of registering, with their
//     registrations: anyone may register under LINKSLOT_DCR_POLICY=open,
//     and a client a person never approved holds nothing worth keeping.
//     Oldest first, by the registrations' created_at index.
//   - the shared rate limits' windows (rate_windows) once their second
//     has expired, in one statement rather than batches: the table holds
//     the live windows and a minute of expired ones, and has no index on
//     the expiry, which would cost every counted hit an index update.
//
// Sharing the work: each pass over a task first takes a lease on it in the
// database (store.Leases: an upsert that only succeeds on a free or expired
// lease), renews it before every batch, and frees it at the end. Replicas
// that find a task leased skip it until their next pass; a holder that dies
// loses its lease after LeaseTTL. Batches are small (Batch rows), deleted
// by primary key, skip rows another transaction holds (PostgreSQL: FOR
// UPDATE SKIP LOCKED), and a pause between batches leaves the database to
// the requests. A pass over one task stops after Budget; the backlog goes
// on at the next pass.
//
// RunOnce is one complete pass with no budget (authserver janitor --once,
// for people who prefer cron); Run repeats a pass every Interval, with
// jitter, until its context ends. Rows deleted are counted in
// linkslot_janitor_rows_deleted_total{task}.
package janitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/store"
)

// Defaults of Config.
const (
	Grace          = time.Hour
	EmailLinkGrace = 24 * time.Hour
	// OutboxRetention is how long a delivered or failed notification is
	// kept, for the delivery log and replay.
	OutboxRetention = 30 * 24 * time.Hour
	Batch           = 500
	Pause           = 20 * time.Millisecond
	Budget          = 10 * time.Second
	Interval        = time.Minute
	LeaseTTL        = time.Minute
)

// Task is one kind of row to forget.
type Task struct {
	// Name names the lease and the metric label.
	Name string
	// Sweep deletes at most limit rows that are due at now and reports
	// how many it deleted.
	Sweep func(ctx context.Context, now time.Time, limit int) (int64, error)
}

// Tasks is the standard list on s.
func Tasks(s store.Sweeps) []Task {
	var ts []Task
	for _, k := range store.TokenKinds {
		ts = append(ts, Task{Name: "token_sessions." + string(k), Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
			return s.SweepTokenSessions(ctx, k, now.Add(-Grace), limit)
		}})
	}
	ts = append(ts, Task{Name: "idempotency_records", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepIdempotency(ctx, now, limit)
	}})
	ts = append(ts, Task{Name: "client_assertions", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepClientAssertions(ctx, now, limit)
	}})
	ts = append(ts, Task{Name: "account_tokens", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepAccountTokens(ctx, now.Add(-EmailLinkGrace), limit)
	}})
	ts = append(ts, Task{Name: "member_invitations", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepMemberInvitations(ctx, now.Add(-EmailLinkGrace), limit)
	}})
	ts = append(ts, Task{Name: "webauthn_ceremonies", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepWebAuthnCeremonies(ctx, now, limit)
	}})
	ts = append(ts, Task{Name: "web_sessions", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepWebSessions(ctx, now, limit)
	}})
	ts = append(ts, Task{Name: "outbox_messages", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepOutbox(ctx, now.Add(-OutboxRetention), limit)
	}})
	ts = append(ts, Task{Name: "client_registrations", Sweep: func(ctx context.Context, now time.Time, limit int) (int64, error) {
		return s.SweepUnusedRegistrations(ctx, now.Add(-dcr.UnusedLifetime), limit)
	}})
	ts = append(ts, Task{Name: "rate_windows", Sweep: s.SweepRateWindows})
	return ts
}

// Config configures a Janitor. Leases and Tasks are required; zero
// durations and sizes take the defaults above.
type Config struct {
	Leases store.Leases
	Tasks  []Task
	// Holder names this process in the leases (default host-pid-random).
	Holder string
	Clock  store.Clock
	Logger *slog.Logger
	// Registerer receives the rows-deleted counter (none when nil).
	Registerer prometheus.Registerer
	Batch      int
	Pause      time.Duration
	Budget     time.Duration
	Interval   time.Duration
	LeaseTTL   time.Duration
}

// Janitor runs the tasks. It is safe for concurrent use, though one per
// process is the intent.
type Janitor struct {
	cfg     Config
	deleted *prometheus.CounterVec
}

// New returns a Janitor.
func New(cfg Config) (*Janitor, error) {
	if cfg.Leases == nil || len(cfg.Tasks) == 0 {
		return nil, errors.New("janitor: Config.Leases and Config.Tasks are required")
	}
	if cfg.Holder == "" {
		cfg.Holder = store.LeaseHolder()
	}
	if cfg.Clock == nil {
		cfg.Clock = store.SystemClock
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Pause, Pause)
	def(&cfg.Budget, Budget)
	def(&cfg.Interval, Interval)
	def(&cfg.LeaseTTL, LeaseTTL)
	if cfg.Batch <= 0 {
		cfg.Batch = Batch
	}
	j := &Janitor{cfg: cfg, deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkslot_janitor_rows_deleted_total", Help: "Rows the janitor deleted, by task.",
	}, []string{"task"})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(j.deleted); err != nil {
			return nil, fmt.Errorf("janitor: register metrics: %w", err)
		}
	}
	for _, t := range cfg.Tasks {
		j.deleted.WithLabelValues(t.Name)
	}
	return j, nil
}

// Result of one task in one pass.
type Result struct {
	Task    string
	Deleted int64
	// Skipped: another process held the lease.
	Skipped bool
	Err     error
}

// RunOnce runs every task to the end of its backlog (no budget) and
// reports each one.
func (j *Janitor) RunOnce(ctx context.Context) []Result {
	return j.pass(ctx, 0)
}

// Run runs a pass (each task bounded by Budget) every Interval, with up to
// a fifth of it as jitter so that replicas drift apart, until ctx ends.
func (j *Janitor) Run(ctx context.Context) {
	for {
		wait := j.cfg.Interval + time.Duration(rand.Int64N(int64(j.cfg.Interval/5)+1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		for _, r := range j.pass(ctx, j.cfg.Budget) {
			switch {
			case r.Err != nil && ctx.Err() == nil:
				j.cfg.Logger.WarnContext(ctx, "janitor: task failed", "task", r.Task, "deleted", r.Deleted, "err", r.Err)
			case r.Deleted > 0:
				j.cfg.Logger.InfoContext(ctx, "janitor: deleted rows", "task", r.Task, "deleted", r.Deleted)
			}
		}
	}
}

func (j *Janitor) pass(ctx context.Context, budget time.Duration) []Result {
	out := make([]Result, 0, len(j.cfg.Tasks))
	for _, t := range j.cfg.Tasks {
		if ctx.Err() != nil {
			break
		}
		out = append(out, j.runTask(ctx, t, budget))
	}
	return out
}

func (j *Janitor) runTask(ctx context.Context, t Task, budget time.Duration) Result {
	r := Result{Task: t.Name}
	began := time.Now()
	held := false
	defer func() {
		if held {
			// A fresh context: the lease should go even when ctx ended.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := j.cfg.Leases.ReleaseLease(rctx, t.Name, j.cfg.Holder); err != nil && r.Err == nil {
				r.Err = err
			}
		}
	}()
	for {
		now := j.cfg.Clock()
		ok, err := j.cfg.Leases.TryLease(ctx, t.Name, j.cfg.Holder, now, now.Add(j.cfg.LeaseTTL))
		if err != nil {
			r.Err = err
			return r
		}
		if !ok {
			r.Skipped = !held
			if held {
				r.Err = errors.New("janitor: lease lost")
			}
			return r
		}
		held = true
		n, err := t.Sweep(ctx, now, j.cfg.Batch)
		r.Deleted += n
		j.deleted.WithLabelValues(t.Name).Add(float64(n))
		if err != nil {
			r.Err = err
			return r
		}
		if n < int64(j.cfg.Batch) || budget > 0 && time.Since(began) >= budget {
			return r
		}
		select {
		case <-ctx.Done():
			r.Err = ctx.Err()
			return r
		case <-time.After(j.cfg.Pause):
		}
	}
}
