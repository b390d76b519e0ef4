package report

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestRun: the operation cap ends a level that its duration would not;
// each worker numbers its operations from 0; every operation is counted,
// each failure too, with the first one's message; each runs under a
// deadline.
func TestRun(t *testing.T) {
	var mu sync.Mutex
	seen := map[int][]int{}
	failed := 0
	r := Run(context.Background(), "w", "b", 3, time.Hour, 30, func(ctx context.Context, w, k int) error {
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("no deadline")
		}
		mu.Lock()
		defer mu.Unlock()
		seen[w] = append(seen[w], k)
		if k%4 == 3 {
			failed++
			return errors.New("every fourth fails")
		}
		return nil
	})
	if r.Ops != 30 || r.Workers != 3 || r.Workload != "w" || r.Backend != "b" {
		t.Fatalf("result %+v, want 30 ops of 3 workers", r)
	}
	total := 0
	for w, ks := range seen {
		if w < 0 || w > 2 {
			t.Fatalf("worker %d", w)
		}
		for i, k := range ks {
			if k != i {
				t.Fatalf("worker %d numbered its operations %v", w, ks)
			}
		}
		total += len(ks)
	}
	if total != 30 || r.Failures != failed {
		t.Fatalf("%d operations ran, %d failed; result %+v", total, failed, r)
	}
	// Some worker ran at least 10 of the 30, so at least one failed.
	if failed == 0 || r.FirstErr != "every fourth fails" {
		t.Fatalf("first error %q", r.FirstErr)
	}
}
