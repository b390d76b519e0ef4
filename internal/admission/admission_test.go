package admission_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/admission"
)

// held is a handler that reports when it runs and returns when told.
type held struct {
	started chan string
	release map[string]chan struct{}
	mu      sync.Mutex
}

func newHeld() *held {
	return &held{started: make(chan string, 64), release: map[string]chan struct{}{}}
}

func (h *held) ch(name string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.release[name]
	if !ok {
		c = make(chan struct{})
		h.release[name] = c
	}
	return c
}

func (h *held) serve(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("n")
	h.started <- name
	<-h.ch(name)
	w.WriteHeader(http.StatusNoContent)
}

// call serves one request named name through g in the background; the
// recorder is complete once done is closed.
func call(g *admission.Gate, h http.HandlerFunc, name string, hdr ...string) (*httptest.ResponseRecorder, chan struct{}) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/oauth2/token?n="+name, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	done := make(chan struct{})
	go func() { defer close(done); g.Handler(h)(rec, req) }()
	return rec, done
}

func waitStarted(t *testing.T, h *held, want string) {
	t.Helper()
	select {
	case got := <-h.started:
		if got != want {
			t.Fatalf("%q was admitted, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%q was never admitted", want)
	}
}

func notStarted(t *testing.T, h *held) {
	t.Helper()
	select {
	case got := <-h.started:
		t.Fatalf("%q was admitted while every slot was taken", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// waitingIs polls the waiting gauge until it reads n.
func waitingIs(t *testing.T, reg *prometheus.Registry, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := gauge(t, reg, "linkslot_admission_waiting")
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %v, want %v", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			if m.Gauge != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s", name)
	return 0
}

// A full gate admits the waiting requests one per freed slot, in the order
// they arrived, and its gauges say how many run and wait.
func TestGateAdmitsInArrivalOrder(t *testing.T) {
	g := admission.New(2, time.Minute)
	reg := prometheus.NewRegistry()
	g.Register(reg)
	h := newHeld()
	var done []chan struct{}
	start := func(name string) {
		_, d := call(g, h.serve, name)
		done = append(done, d)
	}
	start("a")
	waitStarted(t, h, "a")
	start("b")
	waitStarted(t, h, "b")
	// c, d and e queue, in that order: each is waiting before the next
	// arrives (the gauge counts a waiter just before it blocks on the
	// channel, so give it a moment to get there).
	for i, name := range []string{"c", "d", "e"} {
		start(name)
		waitingIs(t, reg, float64(i+1))
		time.Sleep(50 * time.Millisecond)
	}
	notStarted(t, h)
	if got := gauge(t, reg, "linkslot_admission_running"); got != 2 {
		t.Fatalf("running = %v, want 2", got)
	}
	close(h.ch("b"))
	waitStarted(t, h, "c")
	notStarted(t, h)
	close(h.ch("a"))
	waitStarted(t, h, "d")
	close(h.ch("c"))
	waitStarted(t, h, "e")
	for _, name := range []string{"d", "e"} {
		close(h.ch(name))
	}
	for _, d := range done {
		<-d
	}
	if got := gauge(t, reg, "linkslot_admission_running"); got != 0 {
		t.Fatalf("running = %v after every request ended, want 0", got)
	}
	if got := gauge(t, reg, "linkslot_admission_slots"); got != 2 {
		t.Fatalf("slots = %v, want 2", got)
	}
	if got := gauge(t, reg, "linkslot_admission_refused_total"); got != 0 {
		t.Fatalf("refused = %v, want 0", got)
	}
}

// A request that gets no slot within the wait answers 503 with Retry-After
// and never runs: a JSON OAuth error for a client, a page for a browser.
func TestGateRefusesAfterItsWait(t *testing.T) {
	g := admission.New(1, 30*time.Millisecond)
	reg := prometheus.NewRegistry()
	g.Register(reg)
	h := newHeld()
	_, first := call(g, h.serve, "first")
	waitStarted(t, h, "first")

	rec, done := call(g, h.serve, "json", "Accept", "application/json")
	<-done
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d Retry-After %q Cache-Control %q, want 503, 1, no-store", rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Cache-Control"))
	}
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if body.Error != "temporarily_unavailable" || !strings.Contains(body.ErrorDescription, "Retry in a moment") {
		t.Fatalf("body %+v", body)
	}

	rec, done = call(g, h.serve, "page", "Accept", "text/html,application/xhtml+xml")
	<-done
	if rec.Code != http.StatusServiceUnavailable || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(rec.Body.String(), "Reload this page in a moment") {
		t.Fatalf("browser got %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	notStarted(t, h)
	if got := gauge(t, reg, "linkslot_admission_refused_total"); got != 2 {
		t.Fatalf("refused = %v, want 2", got)
	}
	close(h.ch("first"))
	<-first
	admitsAgain(t, g, h, "after") // the refusals took nothing
}

// admitsAgain checks that the gate's one slot is free: a new request runs
// at once and ends.
func admitsAgain(t *testing.T, g *admission.Gate, h *held, name string) {
	t.Helper()
	_, done := call(g, h.serve, name)
	waitStarted(t, h, name)
	close(h.ch(name))
	<-done
}

// A request whose client went away while it waited leaves the queue
// without taking a slot.
func TestGateWaiterCancelled(t *testing.T) {
	g := admission.New(1, time.Minute)
	h := newHeld()
	_, first := call(g, h.serve, "first")
	waitStarted(t, h, "first")
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Handler(h.serve)(rec, httptest.NewRequest(http.MethodPost, "/?n=gone", nil).WithContext(ctx))
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-done
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("cancelled waiter got %d", rec.Code)
	}
	close(h.ch("first"))
	<-first
	admitsAgain(t, g, h, "next")
}

// Outside gives the slot back for the length of an outside wait, so that
// another request runs meanwhile, and takes it again afterwards; outside a
// gated request it does nothing.
func TestOutsideLendsTheSlot(t *testing.T) {
	g := admission.New(1, time.Minute)
	h := newHeld()
	fetching, fetched := make(chan struct{}), make(chan struct{})
	var resumed sync.WaitGroup
	resumed.Add(1)
	outside := func(w http.ResponseWriter, r *http.Request) {
		resume := admission.Outside(r.Context())
		close(fetching)
		<-fetched
		resume()
		resumed.Done()
		h.serve(w, r) // holds the slot again until released
	}
	_, first := call(g, outside, "outside")
	<-fetching
	_, other := call(g, h.serve, "other")
	waitStarted(t, h, "other") // admitted while the first one fetches
	close(fetched)
	notStarted(t, h) // the first one waits for its slot behind "other"
	close(h.ch("other"))
	<-other
	resumed.Wait()
	waitStarted(t, h, "outside")
	_, third := call(g, h.serve, "third")
	notStarted(t, h) // the first one holds the slot again
	close(h.ch("outside"))
	<-first
	waitStarted(t, h, "third")
	close(h.ch("third"))
	<-third

	admission.Outside(context.Background())() // no slot: nothing to give back
}

// A nil gate admits everything.
func TestNilGate(t *testing.T) {
	var g *admission.Gate
	ran := false
	g.Handler(func(http.ResponseWriter, *http.Request) { ran = true })(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if !ran {
		t.Fatal("a nil gate did not run the handler")
	}
	g.Register(prometheus.NewRegistry())
	if n := admission.Size(4); n != 8 {
		t.Fatalf("Size(4) = %d, want 8", n)
	}
	if n := admission.Size(0); n != 2 {
		t.Fatalf("Size(0) = %d, want 2", n)
	}
}
