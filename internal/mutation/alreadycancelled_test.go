package mutation_test

import (
	"context"

	"testing"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// racingEngine is the real engine, except that after each cancel plan it
// commits another cancel of the same booking, from the same plan, before
// the planned one executes: two concurrent cancels, made deterministic.
type racingEngine struct {
	*booking.Service
	st *sqlstore.Store
}

func (r racingEngine) PlanCancel(ctx2 context.Context, req booking.CancelRequest) (booking.CancelPlan, error) {
	p, err := r.Service.PlanCancel(ctx2, req)
	if err != nil || p.AlreadyCancelled {
		return p, err
	}
	err = r.st.InTx(ctx2, func(tx store.Store) error {
		_, err := r.Service.Cancel(ctx2, tx, p)
		return err
	})
	return p, err
}

// TestCancelThatLosesARaceIsAlreadyCancelled: a cancel whose booking a
// concurrent cancel cancelled first answers what any cancel of a cancelled
// booking answers — status cancelled with already_cancelled, nothing
// changed, nothing stored under its key (docs/reference.md §5) — not an
// already_cancelled error.
func TestCancelThatLosesARaceIsAlreadyCancelled(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, st *sqlstore.Store) {
		e := newEnv(t, st)
		ann := mutation.Caller{AccountID: e.acct.ID, LinkID: "lnk_agent1", ClientID: "cli_1", Channel: mutation.ChannelAgent}
		cr := mutation.CreateRequest{BusinessRef: "biz-ny", ServiceRef: "svc-clean", StaffRef: "stf-ana", StartsAt: at(t, "2026-06-03T10:00:00-04:00")}
		pre := must(t, "preview")(e.svc.Create(ctx, ann, cr, mutation.Confirmation{}))
		created := must(t, "create")(e.svc.Create(ctx, ann, cr, confirmed(pre.Summary, "race-create-key-00001")))

		racing := *e.svc
		racing.Engine = racingEngine{Service: e.svc.Engine.(*booking.Service), st: st}
		xr := mutation.CancelRequest{BookingRef: created.Booking.Reference, Grant: created.Grant}
		xp := must(t, "cancel preview")(e.svc.Cancel(ctx, ann, xr, mutation.Confirmation{}))
		records := e.count(t, "idempotency_records")
		o := must(t, "the losing cancel")(racing.Cancel(ctx, ann, xr, confirmed(xp.Summary, "race-cancel-key-00001")))
		if o.Status != mutation.StatusCancelled || !o.AlreadyCancelled || o.Booking == nil || o.Booking.Status != store.BookingCancelled || o.Replay {
			t.Fatalf("the losing cancel: %+v", o)
		}
		if n := e.count(t, "idempotency_records"); n != records {
			t.Fatalf("the losing cancel stored its answer: %d records, %d before", n, records)
		}
	})
}
