package tools

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type countingRecorder struct{ n atomic.Int64 }

func (c *countingRecorder) TouchLink(context.Context, string, time.Time) error {
	c.n.Add(1)
	return nil
}

// TestUseThrottleConcurrent: of many concurrent calls for one link within a
// minute, one asks the store; the next minute, one more does; a clock that
// went backwards does not stop a later record.
func TestUseThrottleConcurrent(t *testing.T) {
	rec := &countingRecorder{}
	var now atomic.Int64
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Duration(now.Load())) }
	u := newUseThrottle(rec, clock, slog.New(slog.DiscardHandler))
	burst := func() {
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() { u.used(context.Background(), "lnk_a") })
		}
		wg.Wait()
	}
	burst()
	if n := rec.n.Load(); n != 1 {
		t.Fatalf("%d store calls for a burst, want 1", n)
	}
	now.Store(int64(30 * time.Second))
	burst()
	if n := rec.n.Load(); n != 1 {
		t.Fatalf("%d store calls within the minute, want 1", n)
	}
	now.Store(int64(61 * time.Second))
	burst()
	if n := rec.n.Load(); n != 2 {
		t.Fatalf("%d store calls a minute later, want 2", n)
	}
	now.Store(int64(10 * time.Second)) // backwards
	burst()
	if n := rec.n.Load(); n != 3 {
		t.Fatalf("%d store calls after the clock went back, want 3", n)
	}
	u.used(context.Background(), "lnk_b")
	if n := rec.n.Load(); n != 4 {
		t.Fatalf("another link's first call: %d store calls, want 4", n)
	}
	var nilThrottle *useThrottle
	nilThrottle.used(context.Background(), "lnk_a") // no recorder: nothing, no panic
}
