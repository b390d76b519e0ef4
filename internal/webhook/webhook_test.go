package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/webhook"
)

var ctx = context.Background()

// TestSpecVector: Sign reproduces the Standard Webhooks specification's
// test vector.
func TestSpecVector(t *testing.T) {
	key, err := webhook.Key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestReferenceVerifier: the reference Go library of Standard Webhooks
// accepts our signature, and refuses a tampered body, another secret and a
// timestamp older than its five-minute tolerance.
func TestReferenceVerifier(t *testing.T) {
	secret := webhook.NewSecret()
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	key, err := webhook.Key(secret)
	if err != nil || len(key) != 32 {
		t.Fatalf("key of %d bytes, %v", len(key), err)
	}
	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"booking.created","data":{"booking":{"booking_reference":"LS-1"}}}`)
	headers := func(ts time.Time, b []byte, k []byte) http.Header {
		h := http.Header{}
		h.Set("webhook-id", "msg_abc")
		h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		h.Set("webhook-signature", webhook.Sign(k, "msg_abc", ts, b))
		return h
	}
	now := time.Now()
	if err := ref.Verify(body, headers(now, body, key)); err != nil {
		t.Fatalf("reference library refused our signature: %v", err)
	}
	tampered := []byte(strings.Replace(string(body), "LS-1", "LS-2", 1))
	if err := ref.Verify(tampered, headers(now, body, key)); err == nil {
		t.Fatal("tampered body accepted")
	}
	if err := ref.Verify(body, headers(now.Add(-10*time.Minute), body, key)); err == nil {
		t.Fatal("ten-minute-old timestamp accepted")
	}
	other, _ := webhook.Key(webhook.NewSecret())
	if err := ref.Verify(body, headers(now, body, other)); err == nil {
		t.Fatal("signature with another secret accepted")
	}
}

func TestSealer(t *testing.T) {
	s, err := webhook.NewSealer([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("whe_1", "whsec_x")
	if strings.Contains(string(sealed), "whsec_x") {
		t.Fatal("secret stored in the clear")
	}
	if got, err := s.Open("whe_1", sealed); err != nil || got != "whsec_x" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.Open("whe_2", sealed); err == nil {
		t.Fatal("a secret opened under another endpoint's id")
	}
	o, _ := webhook.NewSealer([]byte(strings.Repeat("j", 32)))
	if _, err := o.Open("whe_1", sealed); err == nil {
		t.Fatal("a secret opened with another secret key")
	}
}

// receiver is a business's HTTPS endpoint that verifies every delivery with
// the reference library and answers 503 until the clock passes healthyAt.
type receiver struct {
	t         *testing.T
	ref       *standardwebhooks.Webhook
	mu        sync.Mutex
	healthyAt time.Time
	clock     func() time.Time
	got       map[string]int // webhook-id → accepted deliveries
	refused   int
	types     map[string]string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := rc.ref.Verify(body, r.Header); err != nil {
		rc.t.Errorf("delivery failed verification: %v", err)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.clock().Before(rc.healthyAt) {
		rc.refused++
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var ev struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(body, &ev)
	id := r.Header.Get("webhook-id")
	rc.got[id]++
	rc.types[id] = ev.Type
	w.WriteHeader(http.StatusNoContent)
}

type fixture struct {
	s        *sqlstore.Store
	ep       store.WebhookEndpoint
	deliver  *webhook.Deliverer
	received *receiver
}

func newFixture(t *testing.T, s *sqlstore.Store, clock func() time.Time) *fixture {
	t.Helper()
	cat, err := s.PutCatalog(ctx, store.Catalog{Business: store.Business{Reference: "biz-hooks", Name: "Hooks", Category: store.CategoryAppointment,
		TimeZone: "Europe/Lisbon", Currency: "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	secret := webhook.NewSecret()
	ref, _ := standardwebhooks.NewWebhook(secret)
	rc := &receiver{t: t, ref: ref, clock: clock, got: map[string]int{}, types: map[string]string{}}
	ca := testkit.NewCA(t)
	srv := ca.StartTLS(t, rc, "localhost", "127.0.0.1")
	sealer, _ := webhook.NewSealer([]byte(strings.Repeat("k", 32)))
	ep := store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: cat.Business.ID, URL: srv.URL + "/hooks/linkslot",
		Events: []string{"booking.created"}, Enabled: true, CreatedAt: clock(), UpdatedAt: clock()}
	ep.SecretEncrypted = sealer.Seal(ep.ID, secret)
	if err := s.CreateWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	d := &webhook.Deliverer{Endpoints: s, Sealer: sealer, Development: true, Clock: clock,
		Client: webhook.NewClient(true, safefetch.DialOptions{RootCAs: ca.Pool()})}
	return &fixture{s: s, ep: ep, deliver: d, received: rc}
}

func (f *fixture) enqueue(t *testing.T, n int, at time.Time) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		id := store.NewID("msg")
		ids = append(ids, id)
		body := `{"type":"booking.created","timestamp":"` + at.UTC().Format(time.RFC3339) + `","data":{"n":` + strconv.Itoa(i) + `}}`
		if err := f.s.EnqueueMessages(ctx, store.OutboxMessage{ID: id, Channel: store.ChannelWebhook, Topic: "booking.created",
			EndpointID: f.ep.ID, BusinessID: f.ep.BusinessID, Payload: []byte(body), CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// TestReceiverDownTwoMinutes: an endpoint that answers 503 for two minutes
// (an injected clock, not real time) gets every event afterwards, each with
// its original webhook-id and exactly once; the first retry of each comes
// within 30 s of its first failure.
func TestReceiverDownTwoMinutes(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		var mu sync.Mutex
		now := store.UTC(time.Now()) // the reference verifier checks timestamps against real time
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		f := newFixture(t, s, clock)
		f.received.healthyAt = now.Add(2 * time.Minute)
		ids := f.enqueue(t, 5, now)
		// No jitter: the waits are 5, 10, 20, 40, 80 s (the lower bound).
		w := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelWebhook: f.deliver}, Clock: clock,
			Rand: func() float64 { return 0 }}
		start := now
		for step := 0; step < 60; step++ {
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			f.received.mu.Lock()
			done := len(f.received.got) == len(ids)
			f.received.mu.Unlock()
			if done {
				break
			}
			mu.Lock()
			now = now.Add(5 * time.Second)
			mu.Unlock()
		}
		// Attempts at 0, 5, 15, 35, 75 and 155 s: the sixth, the first after
		// the receiver recovered, delivers.
		if elapsed := clock().Sub(start); elapsed < 2*time.Minute || elapsed > 160*time.Second {
			t.Errorf("delivered after %s of injected time, want between 2m and 2m40s", elapsed)
		}
		for _, id := range ids {
			if f.received.got[id] != 1 || f.received.types[id] != "booking.created" {
				t.Errorf("%s received %d times", id, f.received.got[id])
			}
			m, err := s.GetMessage(ctx, id)
			if err != nil || m.Status != store.OutboxDelivered {
				t.Fatalf("%s: %+v %v", id, m, err)
			}
			atts, _ := s.ListAttempts(ctx, id)
			if len(atts) < 3 || atts[0].StatusCode != 503 || !atts[len(atts)-1].OK || atts[len(atts)-1].StatusCode != 204 {
				t.Fatalf("%s attempts %+v", id, atts)
			}
			if gap := atts[1].At.Sub(atts[0].At); gap > 30*time.Second {
				t.Errorf("%s: first retry %s after the first failure, want within 30 s", id, gap)
			}
		}
		if f.received.refused < len(ids) {
			t.Fatalf("receiver refused %d deliveries", f.received.refused)
		}
	})
}

// TestCrashAfterCommit: a process that commits the outbox messages and dies
// before delivering them, or dies holding their lease, loses nothing: the
// next worker delivers each once the lease expires.
func TestCrashAfterCommit(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		var mu sync.Mutex
		now := store.UTC(time.Now())
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		f := newFixture(t, s, clock)
		ids := f.enqueue(t, 3, now) // committed, never delivered
		// The crashed process had leased them: its lease must expire first.
		if got, err := s.LeaseMessages(ctx, "crashed", now, time.Minute, 10); err != nil || len(got) != 3 {
			t.Fatalf("lease by the doomed process: %d, %v", len(got), err)
		}
		w := &outbox.Worker{Store: s, Channels: map[string]outbox.Deliverer{store.ChannelWebhook: f.deliver}, Clock: clock, Owner: "survivor"}
		if n, _ := w.RunOnce(ctx); n != 0 {
			t.Fatalf("leased %d messages under a live lease", n)
		}
		mu.Lock()
		now = now.Add(61 * time.Second)
		mu.Unlock()
		if n, err := w.RunOnce(ctx); err != nil || n != 3 {
			t.Fatalf("after the lease expired: %d, %v", n, err)
		}
		for _, id := range ids {
			if f.received.got[id] != 1 {
				t.Fatalf("%s received %d times", id, f.received.got[id])
			}
		}
	})
}

// TestRefusedAddresses: an endpoint whose URL leads to a private address is
// never contacted; without development mode loopback is refused too.
func TestRefusedAddresses(t *testing.T) {
	s := sqltest.SQLite(t)
	now := store.UTC(time.Now())
	clock := func() time.Time { return now }
	f := newFixture(t, s, clock)
	f.deliver.Development = false
	f.deliver.Client = webhook.NewClient(false, safefetch.DialOptions{})
	ids := f.enqueue(t, 1, now)
	m, _ := s.GetMessage(ctx, ids[0])
	res := f.deliver.Deliver(ctx, m)
	if res.OK || res.Err == nil || !strings.Contains(res.Err.Error(), "not allowed") || len(f.received.got) != 0 {
		t.Fatalf("https loopback endpoint outside development: %+v", res)
	}
	if _, err := f.s.UpdateWebhookEndpoint(ctx, f.ep.ID, func(e store.WebhookEndpoint) (store.WebhookEndpoint, error) {
		e.URL = "https://10.0.0.1/hook"
		return e, nil
	}); err != nil {
		t.Fatal(err)
	}
	res = f.deliver.Deliver(ctx, m)
	if res.OK || res.Err == nil || !strings.Contains(res.Err.Error(), "not allowed") {
		t.Fatalf("private address: %+v", res)
	}
}
