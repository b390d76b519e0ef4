package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

func rateWindows(t *testing.T, s store.Store) store.RateWindows {
	t.Helper()
	rw, ok := s.(store.RateWindows)
	if !ok {
		t.Fatalf("%T does not implement store.RateWindows", s)
	}
	return rw
}

func testRateWindows(t *testing.T, s store.Store) {
	rw := rateWindows(t, s)
	const now = int64(2_000_000_000)
	// A window of 3 s and a limit of 4: hits at now-2, now-1, now count.
	for i, want := range []bool{true, true} {
		ok, err := rw.TakeRate(ctx, "addr:a", now-2, 3, 4)
		must(t, err)
		if ok != want {
			t.Fatalf("hit %d at now-2 = %v", i, ok)
		}
	}
	ok, err := rw.TakeRate(ctx, "addr:a", now-1, 3, 4)
	must(t, err)
	if !ok {
		t.Fatal("third hit refused")
	}
	ok, _ = rw.TakeRate(ctx, "addr:a", now, 3, 4)
	if !ok {
		t.Fatal("fourth hit (a new second) refused")
	}
	for range 2 {
		if ok, _ := rw.TakeRate(ctx, "addr:a", now, 3, 4); ok {
			t.Fatal("fifth hit allowed")
		}
	}
	if ok, _ := rw.TakeRate(ctx, "addr:b", now, 3, 4); !ok {
		t.Fatal("another key is limited by the first")
	}
	// now+1: the two hits of now-2 left the window.
	for i := range 2 {
		if ok, _ := rw.TakeRate(ctx, "addr:a", now+1, 3, 4); !ok {
			t.Fatalf("hit %d after the window slid refused", i)
		}
	}
	if ok, _ := rw.TakeRate(ctx, "addr:a", now+1, 3, 4); ok {
		t.Fatal("hit beyond the limit after the slide allowed")
	}
	got, err := rw.RateWindow(ctx, "addr:a", now-3)
	must(t, err)
	want := []store.RateSecond{{Sec: now - 2, Hits: 2}, {Sec: now - 1, Hits: 1}, {Sec: now, Hits: 1}, {Sec: now + 1, Hits: 2}}
	if len(got) != len(want) {
		t.Fatalf("RateWindow = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("RateWindow = %v, want %v", got, want)
		}
	}

	// Sign-in failures: AddRateHit counts without a limit; DeleteRateHits
	// forgets a key.
	for range 3 {
		must(t, rw.AddRateHit(ctx, "signin:acct:x", now, 900))
	}
	must(t, rw.AddRateHit(ctx, "signin:acct:x", now+5, 900))
	got, _ = rw.RateWindow(ctx, "signin:acct:x", now-900)
	if len(got) != 2 || got[0].Hits != 3 || got[1] != (store.RateSecond{Sec: now + 5, Hits: 1}) {
		t.Fatalf("failures = %v", got)
	}
	must(t, rw.DeleteRateHits(ctx, "signin:acct:x"))
	if got, _ = rw.RateWindow(ctx, "signin:acct:x", 0); len(got) != 0 {
		t.Fatalf("after delete = %v", got)
	}

	// Purge: rows whose expiry passed go; others stay.
	must(t, rw.AddRateHit(ctx, "signin:addr:y", now, 900))
	n, err := sweeps(t, s).SweepRateWindows(ctx, time.Unix(now+4, 0), 1) // addr:a rows of now-2 (expires now+1) ... now (now+3); limit ignored
	must(t, err)
	if n != 4 {
		t.Fatalf("purged %d rows, want 4 (addr:a's now-2..now, addr:b's now)", n)
	}
	if got, _ = rw.RateWindow(ctx, "signin:addr:y", 0); len(got) != 1 {
		t.Fatalf("a live row was purged: %v", got)
	}
	if got, _ = rw.RateWindow(ctx, "addr:a", 0); len(got) != 1 || got[0].Sec != now+1 {
		t.Fatalf("addr:a after purge = %v", got)
	}
}

// testRateWindowsConcurrent: 40 concurrent hits on a limit of 10 in one
// second count exactly 10.
func testRateWindowsConcurrent(t *testing.T, s store.Store) {
	rw := rateWindows(t, s)
	const now = int64(2_000_000_000)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			ok, err := rw.TakeRate(ctx, "addr:c", now, 2, 10)
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 10 {
		t.Fatalf("%d of 40 concurrent hits allowed on a limit of 10", n)
	}
	got, _ := rw.RateWindow(ctx, "addr:c", 0)
	if len(got) != 1 || got[0].Hits != 10 {
		t.Fatalf("window = %v", got)
	}
}
