// Package admission bounds how many of the authorization server's
// database-bound requests run at once, and admits the others in the order
// they arrived.
//
// Each OAuth request (authorize, token, revocation, introspection,
// userinfo) needs a database connection two to four times in a few
// milliseconds. With more such requests in flight than the pool has
// connections, they queue inside database/sql, which hands a freed
// connection to a waiter picked at random: a request can lose that draw
// many times in a row, so the slowest hundredth waits several times longer
// than the average one, and the extra goroutines compete for the same
// cores the requests being served need. A Gate lets a fixed number of
// requests in — twice the pool's connections (Size), so that each
// connection has one request using it and one about to — and queues the
// rest on a channel, whose blocked senders Go wakes first come, first
// served. The pool's own queue then stays short, and the time a request
// waits is the same for everyone.
//
// A request that is not admitted within the gate's wait (Wait, 5 s)
// answers 503 with Retry-After and changes nothing: the server is busy,
// not broken, and the client may retry in a moment. An admitted request
// gives its slot back while it fetches from outside (a client's metadata
// document or key set: Outside), so a slow remote host cannot hold the
// gate shut, and takes its turn again when the fetch returns. Nor can a
// slow client: the authorization server reads a request's body in full
// before the request queues (authhttp's body limit), so a body sent a byte
// at a time holds a goroutine, not a slot.
package admission

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/prometheus/client_golang/prometheus"
)

// Wait is how long a request waits for a slot before 503 (Gate.Wait's
// default). It is well beyond a normal turn: at the bench's 64 workers on
// 4 connections a request waits about 60 ms.
const Wait = 5 * time.Second

// RetryAfter is the Retry-After, in seconds, of a refused request.
const RetryAfter = 1

// Size is the number of slots for a database pool of conns connections:
// 2 × conns, at least 2.
func Size(conns int) int { return 2 * max(conns, 1) }

// Gate admits at most its size of requests at once. The zero value is not
// usable; a nil *Gate admits everything.
type Gate struct {
	slots   chan struct{}
	wait    time.Duration
	waiting atomic.Int64
	refused atomic.Int64
}

// New returns a gate of n slots (at least 1) whose requests wait at most
// wait (Wait when 0 or less).
func New(n int, wait time.Duration) *Gate {
	if wait <= 0 {
		wait = Wait
	}
	return &Gate{slots: make(chan struct{}, max(n, 1)), wait: wait}
}

// Slots returns the gate's size.
func (g *Gate) Slots() int { return cap(g.slots) }

// Register adds the gate's gauges and counter to reg (nil: none):
// linkslot_admission_slots, linkslot_admission_running,
// linkslot_admission_waiting and linkslot_admission_refused_total. A second
// gate on the same registry keeps the first one's series.
func (g *Gate) Register(reg prometheus.Registerer) {
	if g == nil || reg == nil {
		return
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	for _, c := range []prometheus.Collector{
		gauge("linkslot_admission_slots", "OAuth requests the authorization server runs at once (twice the database pool).",
			func() float64 { return float64(cap(g.slots)) }),
		gauge("linkslot_admission_running", "OAuth requests running now.",
			func() float64 { return float64(len(g.slots)) }),
		gauge("linkslot_admission_waiting", "OAuth requests waiting for a slot now.",
			func() float64 { return float64(g.waiting.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "linkslot_admission_refused_total",
			Help: "OAuth requests answered 503 because no slot freed within the wait."},
			func() float64 { return float64(g.refused.Load()) }),
	} {
		_ = reg.Register(c) // AlreadyRegisteredError: keep the first
	}
}

// Handler runs h in a slot. A request that gets none within the wait, or
// whose context ends first, is answered 503 with Retry-After (Refuse).
func (g *Gate) Handler(h http.HandlerFunc) http.HandlerFunc {
	if g == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		s := &slot{g: g}
		if !s.acquire(r.Context(), true) {
			Refuse(w, r)
			return
		}
		defer s.release()
		h(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
	}
}

// Outside gives back the slot of the request ctx belongs to, if it holds
// one, for work that waits on another host rather than on this server;
// the returned function takes a slot again, queueing behind the requests
// that arrived meanwhile. Callers write defer admission.Outside(ctx)().
func Outside(ctx context.Context) (resume func()) {
	s, _ := ctx.Value(slotKey{}).(*slot)
	if s == nil || !s.release() {
		return func() {}
	}
	return func() { s.acquire(ctx, false) }
}

// Refuse answers 503 with Retry-After: a JSON OAuth error
// (temporarily_unavailable) for clients, a short page for a browser.
func Refuse(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(RetryAfter))
	h.Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(busyPage))
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(`{"error":"` + problem.CodeTemporarilyUnavailable + `","error_description":"The server is busy. Retry in a moment (Retry-After); nothing was changed."}`))
}

const busyPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Linkslot is busy</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Linkslot is busy</h1>
<p>Too many requests are being served right now. Reload this page in a moment; nothing was changed.</p>
</main></body></html>
`

type slotKey struct{}

// slot is one request's hold on the gate. Outside may give it back and take
// it again, so it records whether it is held.
type slot struct {
	g    *Gate
	mu   sync.Mutex
	held bool
}

// acquire takes a slot, waiting at most the gate's wait or until ctx ends.
// A request already running (first false) that cannot get its slot back
// carries on without one: its context has ended or the server is
// overloaded, and refusing it halfway would serve no one.
func (s *slot) acquire(ctx context.Context, first bool) bool {
	g := s.g
	select {
	case g.slots <- struct{}{}:
	default:
		g.waiting.Add(1)
		t := time.NewTimer(g.wait)
		select {
		case g.slots <- struct{}{}:
			g.waiting.Add(-1)
			t.Stop()
		case <-t.C:
			g.waiting.Add(-1)
			if first {
				g.refused.Add(1)
			}
			return false
		case <-ctx.Done():
			g.waiting.Add(-1)
			t.Stop()
			return false
		}
	}
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	return true
}

// release gives the slot back if it is held, and reports whether it was.
func (s *slot) release() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return false
	}
	s.held = false
	<-s.g.slots
	return true
}
