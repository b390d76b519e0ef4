package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/store"
)

// WaitlistTx is what passing lapsed waitlist offers on reaches in its
// transaction: the offers and entries (booking.LapseTx) and the outbox and
// reads of the offer's notifications (mutation.NotifyTx).
type WaitlistTx interface {
	booking.LapseTx
	mutation.NotifyTx
}

var _ WaitlistTx = store.Store(nil)

// WaitlistWorker passes offers nobody used in time to the next waiting
// person (docs/design.md "The waitlist"). Every resource server process runs
// one; each pass lapses a batch of offers and makes the next offers in one
// transaction, and two processes never take the same offer (FOR UPDATE
// SKIP LOCKED on PostgreSQL; SQLite's write lock).
type WaitlistWorker struct {
	Store    store.Store
	Engine   *booking.Service
	Notifier mutation.Notifier // an OfferNotifier tells the next person; nil: nobody is told
	Every    time.Duration     // default 5 s
	Logger   *slog.Logger
}

// batch is how many lapsed offers one pass takes.
const waitlistBatch = 20

// RunOnce makes one pass and answers how many offers lapsed and how many
// slots were offered again.
func (w *WaitlistWorker) RunOnce(ctx context.Context) (lapsed, offered int, err error) {
	err = w.Store.InTx(ctx, func(s store.Store) error {
		var tx WaitlistTx = s
		ls, os, err := w.Engine.PassOnLapsed(ctx, tx, waitlistBatch)
		if err != nil {
			return err
		}
		if on, ok := w.Notifier.(mutation.OfferNotifier); ok {
			for _, o := range os {
				if err := on.WaitlistOffered(ctx, tx, o); err != nil {
					return err
				}
			}
		}
		lapsed, offered = len(ls), len(os)
		return nil
	})
	return lapsed, offered, err
}

// Run makes a pass every w.Every until ctx ends, at once again while a pass
// fills its batch.
func (w *WaitlistWorker) Run(ctx context.Context) {
	every := w.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for {
			n, _, err := w.RunOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					log.WarnContext(ctx, "waitlist: passing lapsed offers on", "err", err)
				}
				break
			}
			if n < waitlistBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
