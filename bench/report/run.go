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
	s := Measure(ctx, n, dur, maxOps, op)
	return s.Summarize(workload, backend, n)
}

// Sample is what one or more windows of Measure saw, not yet summarized.
type Sample struct {
	Lat      []time.Duration // every operation's latency
	Failures int
	Elapsed  time.Duration
	FirstErr string
}

// Add adds the windows of o to s.
func (s *Sample) Add(o Sample) {
	s.Lat = append(s.Lat, o.Lat...)
	s.Failures += o.Failures
	s.Elapsed += o.Elapsed
	if s.FirstErr == "" {
		s.FirstErr = o.FirstErr
	}
}

// Summarize is the result row of s.
func (s Sample) Summarize(workload, backend string, n int) Result {
	return Summarize(workload, backend, n, s.Lat, s.Failures, s.Elapsed, s.FirstErr)
}

// Measure is Run without the summary: one window, as a Sample.
func Measure(ctx context.Context, n int, dur time.Duration, maxOps int64, op Op) Sample {
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
	s := Sample{Elapsed: time.Since(start), Failures: int(fails.Load())}
	for _, l := range lat {
		s.Lat = append(s.Lat, l...)
	}
	s.FirstErr, _ = firstErr.Load().(string)
	return s
}
