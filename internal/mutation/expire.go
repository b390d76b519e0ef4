package mutation

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// ExpiryLease names the lease the expiry job takes, beside the janitor's.
const ExpiryLease = "pending_bookings"

// Defaults of Expirer.
const (
	ExpiryInterval = 30 * time.Second
	ExpiryLeaseTTL = time.Minute
	ExpiryBatch    = 100
)

// Expirer is the job that declines unanswered pending bookings at their
// respond-by instant (docs/reference.md "Bookings the business answers"),
// once across replicas: every server process runs one, and each pass
// first takes the database lease ExpiryLease (store.Leases, as
// internal/janitor does), renews it before every batch and frees it at the
// end; a process that finds it held skips the pass. Even without the
// lease a booking is declined once: ExpirePending re-checks each booking
// on its locked row.
type Expirer struct {
	Service *Service
	Leases  store.Leases
	// Holder names this process in the lease (default host-pid-random).
	Holder   string
	Clock    store.Clock
	Logger   *slog.Logger
	Interval time.Duration
	LeaseTTL time.Duration
	Batch    int
}

// NewExpirer returns an Expirer with its defaults filled in.
func NewExpirer(x Expirer) (*Expirer, error) {
	if x.Service == nil || x.Leases == nil {
		return nil, errors.New("mutation: Expirer needs Service and Leases")
	}
	if x.Holder == "" {
		x.Holder = store.LeaseHolder()
	}
	if x.Clock == nil {
		x.Clock = store.SystemClock
	}
	if x.Logger == nil {
		x.Logger = slog.Default()
	}
	if x.Interval <= 0 {
		x.Interval = ExpiryInterval
	}
	if x.LeaseTTL <= 0 {
		x.LeaseTTL = ExpiryLeaseTTL
	}
	if x.Batch <= 0 {
		x.Batch = ExpiryBatch
	}
	return &x, nil
}

// RunOnce is one pass: under the lease, batches of due bookings until none
// is left. It reports how many it declined, and skipped when another
// process held the lease.
func (x *Expirer) RunOnce(ctx context.Context) (declined int64, skipped bool, err error) {
	held := false
	defer func() {
		if held {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if rerr := x.Leases.ReleaseLease(rctx, ExpiryLease, x.Holder); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	for {
		now := x.Clock()
		ok, err := x.Leases.TryLease(ctx, ExpiryLease, x.Holder, now, now.Add(x.LeaseTTL))
		if err != nil {
			return declined, false, err
		}
		if !ok {
			if held {
				return declined, false, errors.New("mutation: expiry lease lost")
			}
			return 0, true, nil
		}
		held = true
		n, err := x.Service.ExpirePending(ctx, x.Batch)
		declined += n
		if err != nil || n < int64(x.Batch) {
			return declined, false, err
		}
	}
}

// Run runs a pass every Interval, with up to a fifth of it as jitter, until
// ctx ends.
func (x *Expirer) Run(ctx context.Context) {
	for {
		wait := x.Interval + time.Duration(rand.Int64N(int64(x.Interval/5)+1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		n, _, err := x.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			x.Logger.WarnContext(ctx, "pending bookings: expiry pass failed", "declined", n, "err", err)
		case n > 0:
			x.Logger.InfoContext(ctx, "pending bookings: declined unanswered", "declined", n)
		}
	}
}
