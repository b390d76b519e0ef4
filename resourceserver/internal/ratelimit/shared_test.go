package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/ratelimit"
)

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		l      ratelimit.Limit
		limit  int
		window int64
	}{
		{ratelimit.Limit{PerSecond: 100, Burst: 200}, 200, 2},
		{ratelimit.Limit{PerSecond: 20, Burst: 40}, 40, 2},
		{ratelimit.Limit{PerSecond: 10}, 10, 1},
		{ratelimit.Limit{PerSecond: 3, Burst: 10}, 10, 4},
		{ratelimit.Limit{}, 0, 0},
	} {
		if l, w := ratelimit.Window(tc.l); l != tc.limit || w != tc.window {
			t.Errorf("Window(%+v) = %d, %d; want %d, %d", tc.l, l, w, tc.limit, tc.window)
		}
	}
}

// TestShared: two limiters on one database (two replicas) share one
// window: together they allow exactly Burst hits, then answer when the
// window has room again.
func TestShared(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		now := time.Unix(2_000_000_000, 0)
		clock := func() time.Time { return now }
		l := ratelimit.Limit{PerSecond: 5, Burst: 10} // 10 per 2 s
		a := ratelimit.NewShared(s, l, ratelimit.SharedOptions{Prefix: "t:", Clock: clock})
		b := ratelimit.NewShared(s, l, ratelimit.SharedOptions{Prefix: "t:", Clock: clock})
		other := ratelimit.NewShared(s, l, ratelimit.SharedOptions{Prefix: "u:", Clock: clock})
		ctx := t.Context()
		allowed := 0
		for i := range 30 {
			lim := a
			if i%2 == 1 {
				lim = b
			}
			if ok, _ := lim.Allow(ctx, "k"); ok {
				allowed++
			}
		}
		if allowed != 10 {
			t.Fatalf("two replicas allowed %d of 30, want the shared 10", allowed)
		}
		ok, after := a.Allow(ctx, "k")
		if ok || after != 2*time.Second {
			t.Fatalf("Allow = %v, %v; want refused for 2s (all 10 hits in the current second)", ok, after)
		}
		if ok, _ := other.Allow(ctx, "k"); !ok {
			t.Fatal("another prefix shares the window")
		}
		now = now.Add(time.Second)
		if ok, _ := b.Allow(ctx, "k"); ok {
			t.Fatal("allowed while the window is still full")
		}
		now = now.Add(time.Second)
		if ok, _ := b.Allow(ctx, "k"); !ok {
			t.Fatal("refused after the window slid past the burst")
		}
	})
}

type brokenWindows struct{ store.RateWindows }

func (brokenWindows) TakeRate(context.Context, string, int64, int64, int) (bool, error) {
	return false, errors.New("database down")
}

// TestSharedFallsBack: when the database cannot answer, the limiter
// limits in memory and logs that at most once a minute.
func TestSharedFallsBack(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(2_000_000_000, 0)
	lim := ratelimit.NewShared(brokenWindows{}, ratelimit.Limit{PerSecond: 1, Burst: 3},
		ratelimit.SharedOptions{Clock: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	allowed := 0
	for range 10 {
		if ok, _ := lim.Allow(t.Context(), "k"); ok {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("in-memory fallback allowed %d of 10, want the burst of 3", allowed)
	}
	if n := strings.Count(buf.String(), "shared rate limit unavailable"); n != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", n, buf.String())
	}
}
