package rshttp_test

import (
	"fmt"
	"testing"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
)

// BenchmarkMutationCycle measures confirmed create + cancel cycles through
// the MCP Go SDK client over HTTP with bearer verification: each cycle is
// four tool calls (create preview, create confirmed, cancel preview, cancel
// confirmed), two write transactions each with its booking, idempotency
// record and Activity entry. The cancelled booking frees the slot for the
// next cycle.
//
//	scripts/with-postgres go test ./resourceserver/rshttp -run '^$' -bench MutationCycle -benchtime 200x
func BenchmarkMutationCycle(b *testing.B) {
	for _, be := range sqltest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			e := newEnv(b, envOpts{noLimits: true, store: be.Open(b)})
			ag := e.agentFor(e.account, e.link, "")
			args := haircut("10:00")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				pre, err := ag.try(tools.CreateMyBooking, args)
				if err != nil || pre.Status != tools.StatusConfirmationRequired {
					b.Fatalf("preview: %v %s", err, pre.raw)
				}
				c, err := ag.try(tools.CreateMyBooking, confirmed(args, pre.ConfirmedSummary, fmt.Sprintf("bench-create-%010d", i)))
				if err != nil || c.Status != tools.StatusConfirmed {
					b.Fatalf("create: %v %s", err, c.raw)
				}
				cancel := map[string]any{"booking_reference": c.Booking.Reference, "grant": c.grant()}
				xp, err := ag.try(tools.CancelMyBooking, cancel)
				if err != nil || xp.Status != tools.StatusConfirmationRequired {
					b.Fatalf("cancel preview: %v %s", err, xp.raw)
				}
				x, err := ag.try(tools.CancelMyBooking, confirmed(cancel, xp.ConfirmedSummary, fmt.Sprintf("bench-cancel-%010d", i)))
				if err != nil || x.Status != tools.StatusCancelled {
					b.Fatalf("cancel: %v %s", err, x.raw)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}
