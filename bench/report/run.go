package report

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// OpTimeout bounds one operation of Run.
const OpTimeout = 30 * time.Second

// Op is operation k (counting from 0) of worker w.
type Op func(ctx context.Context, w, k int) error

// Run runs op on n workers for dur, maxOps operations at most in all, each
// under OpTimeout, and summarizes the level: every operation's latency,
// failed ones included, the failures and the first failure's message.
func Run(ctx context.Context, workload, backend string, n int, dur time.Duration, maxOps int64, op Op) Result {
	lat := make([][]time.Duration, n)
	var fails, count atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; time.Now().Before(deadline) && count.Add(1) <= maxOps; k++ {
				t0 := time.Now()
				cctx, cancel := context.WithTimeout(ctx, OpTimeout)
				err := op(cctx, w, k)
				cancel()
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil {
					fails.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	first, _ := firstErr.Load().(string)
	return Summarize(workload, backend, n, all, int(fails.Load()), elapsed, first)
}
