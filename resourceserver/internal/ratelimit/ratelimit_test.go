package ratelimit

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l := New(Limit{PerSecond: 1, Burst: 2}, clock)
	for i, want := range []bool{true, true, false} {
		ok, after := l.Allow(t.Context(), "a")
		if ok != want {
			t.Fatalf("call %d: ok=%v, want %v", i, ok, want)
		}
		if !ok && after != time.Second {
			t.Fatalf("retry after %v, want 1s (rounded up to whole seconds)", after)
		}
	}
	if ok, _ := l.Allow(t.Context(), "b"); !ok {
		t.Fatal("keys share a bucket")
	}
	now = now.Add(time.Second)
	if ok, _ := l.Allow(t.Context(), "a"); !ok {
		t.Fatal("no token after a second")
	}
	var unlimited *Limiter
	if ok, _ := unlimited.Allow(t.Context(), "x"); !ok {
		t.Fatal("nil limiter limits")
	}
	if ok, _ := New(Limit{}, clock).Allow(t.Context(), "x"); !ok {
		t.Fatal("zero rate limits")
	}
}
