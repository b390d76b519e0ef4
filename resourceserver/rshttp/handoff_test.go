package rshttp_test

// request_business_callback and join_my_waitlist end to end (docs/reference.md
// §16): the MCP Go SDK client against the whole resource server on SQLite and
// PostgreSQL, with every e-mail delivered by the outbox worker to a test SMTP
// server and every webhook verified with the Standard Webhooks library.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/callbacks"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/notify"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/testkit"
	"github.com/linkslot/linkslot/internal/webhook"
	"github.com/linkslot/linkslot/resourceserver/internal/tools"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

// handoff is one answer of the two §16 tools (or of search_my_bookings).
type handoff struct {
	Status           string                 `json:"status"`
	ConfirmedSummary string                 `json:"confirmed_summary"`
	Missing          []string               `json:"missing"`
	Message          string                 `json:"message"`
	Proposal         map[string]any         `json:"proposal"`
	Callback         *mutation.CallbackView `json:"callback"`
	Waitlist         json.RawMessage        `json:"waitlist"`
	IdempotentReplay bool                   `json:"idempotent_replay"`
	Notified         *tools.Notified        `json:"notified"`
	Error            *tools.ToolError       `json:"error"`
	raw              string
	isError          bool
}

func (h handoff) code() string {
	if h.Error != nil {
		return h.Error.Code
	}
	return ""
}

func (h handoff) entry(t testing.TB) booking.WaitlistView {
	t.Helper()
	var v booking.WaitlistView
	if err := json.Unmarshal(h.Waitlist, &v); err != nil {
		t.Fatalf("waitlist entry: %v in %s", err, h.raw)
	}
	return v
}

func (h handoff) entries(t testing.TB) []booking.WaitlistView {
	t.Helper()
	var v []booking.WaitlistView
	if len(h.Waitlist) > 0 {
		if err := json.Unmarshal(h.Waitlist, &v); err != nil {
			t.Fatalf("waitlist: %v in %s", err, h.raw)
		}
	}
	return v
}

// hcall calls a tool and checks its answer against the listed schema.
func (ag agent) hcall(name string, args map[string]any) handoff {
	ag.t.Helper()
	h, err := ag.htry(name, args)
	if err != nil {
		ag.t.Fatal(err)
	}
	var sc any
	json.Unmarshal([]byte(h.raw), &sc)
	checkAnswer(ag.t, ag.cs, name, &mcp.CallToolResult{StructuredContent: sc})
	return h
}

func (ag agent) htry(name string, args map[string]any) (handoff, error) {
	res, err := ag.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return handoff{}, fmt.Errorf("%s: %w", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var h handoff
	if err := json.Unmarshal(b, &h); err != nil {
		return handoff{}, fmt.Errorf("%s: decode %s: %w", name, b, err)
	}
	h.raw, h.isError = string(b), res.IsError
	return h, nil
}

// hdo previews and confirms.
func (ag agent) hdo(name string, args map[string]any, key string) handoff {
	ag.t.Helper()
	pre := ag.hcall(name, args)
	if pre.isError || pre.Status != "confirmation_required" || pre.ConfirmedSummary == "" || pre.Proposal == nil {
		ag.t.Fatalf("%s preview: %s", name, pre.raw)
	}
	return ag.hcall(name, confirmed(args, pre.ConfirmedSummary, key))
}

// receiver is a business's webhook endpoint under a test CA, verifying
// every delivery with the Standard Webhooks reference library.
type receiver struct {
	mu     sync.Mutex
	events []map[string]any
}

func (r *receiver) byType(typ string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, ev := range r.events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (r *receiver) waitFor(t testing.TB, typ string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := r.byType(typ); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s webhooks after 30 s, want %d", len(r.byType(typ)), typ, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// notifiedEnv is an env whose notifications go to smtpd and to one webhook
// endpoint of Brightcut Barbers.
type notifiedEnv struct {
	*env
	smtpd     *testkit.SMTPServer
	hooks     *receiver
	notes     *app.Notifications
	brightcut store.Business
}

func newNotifiedEnv(t *testing.T, s *sqlstore.Store, o envOpts) *notifiedEnv {
	t.Helper()
	ca := testkit.NewCA(t)
	smtpd := testkit.NewSMTPServer(t)
	settings, err := mail.ParseURL(smtpd.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Issuer: "https://auth.linkslot.test", Resource: "https://mcp.linkslot.test/mcp", SecretKey: []byte(testSecret),
		Mail: settings, MailFrom: "Linkslot <no-reply@auth.linkslot.test>"}
	ns, err := app.NewNotifications(cfg, s, app.NotificationOptions{
		Webhook: &webhook.Deliverer{Development: true, Client: webhook.NewClient(true, safefetch.DialOptions{RootCAs: ca.Pool()})}})
	if err != nil {
		t.Fatal(err)
	}
	ns.Worker.Poll = 20 * time.Millisecond
	o.store, o.notifications = s, ns
	e := newEnv(t, o)

	secret := webhook.NewSecret()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &receiver{}
	srv := ca.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("webhook not verified by the Standard Webhooks library: %v", err)
			w.WriteHeader(400)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		rcv.mu.Lock()
		rcv.events = append(rcv.events, ev)
		rcv.mu.Unlock()
		w.WriteHeader(204)
	}), "localhost", "127.0.0.1")
	biz, err := s.GetBusiness(e.ctx, "biz-brightcut-barbers")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhook.NewSealer([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	ep := store.WebhookEndpoint{ID: store.NewID("whe"), BusinessID: biz.ID, URL: srv.URL + "/in", Events: notify.Events,
		Enabled: true, CreatedAt: now, UpdatedAt: now}
	ep.SecretEncrypted = sealer.Seal(ep.ID, secret)
	if err := s.CreateWebhookEndpoint(e.ctx, ep); err != nil {
		t.Fatal(err)
	}
	return &notifiedEnv{env: e, smtpd: smtpd, hooks: rcv, notes: ns, brightcut: biz}
}

// mailTo waits for an e-mail to addr whose subject contains subject.
func (n *notifiedEnv) mailTo(t testing.TB, addr, subject string) (string, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, m := range n.smtpd.Mails() {
			msg, parts := testkit.ParseMail(t, m.Data)
			if !strings.Contains(strings.Join(m.To, ","), addr) {
				continue
			}
			if s := testkit.Subject(t, msg); strings.Contains(s, subject) {
				text := ""
				if p := testkit.FindPart(parts, "text/plain", false); p != nil {
					text = string(p.Body)
				}
				return s, text
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no e-mail to %s about %q after 30 s", addr, subject)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCallbackRequest: request_business_callback through the whole protocol
// — preview, confirmation, replay, conflict, the per-link limit — with the
// business's e-mail and its callback.requested webhook (verified with the
// Standard Webhooks library), the Activity entry, and the inbox: listed
// with the account's address, marked done, the person told.
func TestCallbackRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		n := newNotifiedEnv(t, s, envOpts{callbacks: &rshttp.Limit{PerSecond: 2.0 / 3600, Burst: 2}})
		e := n.env
		ann := e.agentFor(e.account, e.link, "req-callback-0001")
		args := map[string]any{"business_reference": "biz-brightcut-barbers", "topic": "A quote for a wedding party of six",
			"preferred_times": "weekday mornings", "notes": "Saturday 13 June, six people.",
			// An address the agent makes up is not an argument at all.
		}

		pre := ann.hcall(tools.RequestBusinessCallback, args)
		if pre.isError || pre.Status != "confirmation_required" || !strings.Contains(pre.ConfirmedSummary, e.account.Email) ||
			!strings.Contains(pre.ConfirmedSummary, "Brightcut Barbers") || pre.Proposal["contact_email"] != e.account.Email ||
			e.count("callback_requests") != 0 {
			t.Fatalf("preview: %s", pre.raw)
		}
		withAddress := copyArgs(args)
		withAddress["contact_email"] = "attacker@evil.example"
		if a := ann.hcall(tools.RequestBusinessCallback, withAddress); !a.isError || a.code() != "invalid_argument" || a.Error.Field != "contact_email" {
			t.Fatalf("an address from the agent: %s", a.raw)
		}

		done := ann.hcall(tools.RequestBusinessCallback, confirmed(args, pre.ConfirmedSummary, "callback-key-0000001"))
		if done.isError || done.Status != "requested" || done.Callback == nil || done.Callback.ContactEmail != e.account.Email ||
			done.Notified == nil || done.Notified.Business != "queued" || done.Notified.Webhooks != 1 {
			t.Fatalf("confirmed: %s", done.raw)
		}
		replay := ann.hcall(tools.RequestBusinessCallback, confirmed(args, pre.ConfirmedSummary, "callback-key-0000001"))
		if replay.isError || !replay.IdempotentReplay || replay.Callback == nil || replay.Callback.Reference != done.Callback.Reference {
			t.Fatalf("replay: %s", replay.raw)
		}
		other := copyArgs(args)
		other["topic"] = "Something else"
		if a := ann.hcall(tools.RequestBusinessCallback, confirmed(other, pre.ConfirmedSummary, "callback-key-0000001")); !a.isError || a.code() != "idempotency_conflict" {
			t.Fatalf("conflict: %s", a.raw)
		}
		if c, a := e.count("callback_requests"), e.count("activities"); c != 1 || a != 1 {
			t.Fatalf("%d requests, %d activity entries; want 1 each", c, a)
		}
		acts, err := s.ListActivity(e.ctx, e.account.ID, 10, 0)
		if err != nil || len(acts) != 1 || acts[0].Tool != tools.RequestBusinessCallback || acts[0].Summary != pre.ConfirmedSummary {
			t.Fatalf("activity: %v %+v", err, acts)
		}

		// The business's e-mail and webhook.
		subject, text := n.mailTo(t, "frontdesk@brightcut.example", "Callback requested")
		if !strings.Contains(text, e.account.Email) || !strings.Contains(text, "wedding party") || !strings.Contains(text, done.Callback.Reference) {
			t.Fatalf("business e-mail %q:\n%s", subject, text)
		}
		ev := n.hooks.waitFor(t, notify.EventCallbackRequested, 1)[0]
		data := ev["data"].(map[string]any)
		cb, cust := data["callback"].(map[string]any), data["customer"].(map[string]any)
		if cb["callback_reference"] != done.Callback.Reference || cb["topic"] != args["topic"] || cust["email"] != e.account.Email {
			t.Fatalf("webhook: %v", ev)
		}

		// The limit per link: two executed requests in the hour; the third
		// changes nothing. A replay is not counted.
		second := ann.hdo(tools.RequestBusinessCallback, map[string]any{"business_reference": "biz-brightcut-barbers", "topic": "Gift cards"}, "callback-key-0000002")
		if second.isError || second.Status != "requested" {
			t.Fatalf("second: %s", second.raw)
		}
		third := ann.hcall(tools.RequestBusinessCallback, map[string]any{"business_reference": "biz-brightcut-barbers", "topic": "Parking"})
		third = ann.hcall(tools.RequestBusinessCallback, confirmed(map[string]any{"business_reference": "biz-brightcut-barbers", "topic": "Parking"},
			third.ConfirmedSummary, "callback-key-0000003"))
		if !third.isError || third.code() != "rate_limited" || third.Error.RetryAfterSec < 1 || e.count("callback_requests") != 2 {
			t.Fatalf("third in the hour: %s", third.raw)
		}

		// The inbox: the account's address, marked done, the person told.
		in := &callbacks.Inbox{Store: s, Notifier: n.notes.Notifier, Clock: e.clock.Now}
		open, err := in.Open(e.ctx, n.brightcut.ID, 0)
		if err != nil || len(open) != 2 {
			t.Fatalf("open: %v %+v", err, open)
		}
		for _, it := range open {
			if it.CustomerEmail != e.account.Email || it.Status != store.CallbackOpen {
				t.Fatalf("inbox item: %+v", it)
			}
		}
		if _, err := in.MarkDone(e.ctx, n.brightcut, done.Callback.Reference, e.other.ID, "req-inbox"); err != nil {
			t.Fatal(err)
		}
		if _, err := in.MarkDone(e.ctx, n.brightcut, done.Callback.Reference, e.other.ID, "req-inbox"); err == nil {
			t.Fatal("marking a done request done again succeeded")
		}
		if open, _ := in.Open(e.ctx, n.brightcut.ID, 0); len(open) != 1 {
			t.Fatalf("open after done: %+v", open)
		}
		if _, text := n.mailTo(t, e.account.Email, "has handled your callback request"); !strings.Contains(text, done.Callback.Reference) {
			t.Fatalf("person's e-mail:\n%s", text)
		}
	})
}

// joinArgs is a waitlist request at Brightcut Barbers for a classic haircut.
func joinArgs(staff, from, to, earliest, latest string) map[string]any {
	a := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut",
		"from_local_date": from, "to_local_date": to}
	for k, v := range map[string]string{"with_staff_reference": staff, "earliest_local_time": earliest, "latest_local_time": latest} {
		if v != "" {
			a[k] = v
		}
	}
	return a
}

func (e *env) personAgent(email string) (store.Account, agent) {
	e.t.Helper()
	acc := e.mustAccount(email)
	link, err := e.store.UpsertLink(e.ctx, acc.ID, e.client.ID, []string{scope.OpenID, scope.BookingsRead, scope.BookingsWrite}, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return acc, e.agentFor(acc, link, "")
}

// waitlisted is the first entry search_my_bookings status=waitlisted shows.
func waitlisted(t testing.TB, ag agent) booking.WaitlistView {
	t.Helper()
	h := ag.hcall(tools.SearchMyBookings, map[string]any{"status": "waitlisted"})
	es := h.entries(t)
	if h.isError || len(es) == 0 {
		t.Fatalf("waitlisted: %s", h.raw)
	}
	return es[0]
}

func offerArgs(o *booking.OfferView) map[string]any {
	return map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": o.ServiceReference,
		"staff_reference": o.StaffReference, "starts_at": o.StartsAt.Format(time.RFC3339), "offer_reference": o.Reference}
}

// TestWaitlistOffers: three people wait for Marcus on Wednesday morning. A
// cancellation frees 10:00: the first is offered it (an e-mail and a
// waitlist.offered webhook), nobody else sees or books it, and they book it
// with the offer. Freed again, it is offered to the second, who lets it
// lapse (the clock moves past the offer time); it passes to the third.
func TestWaitlistOffers(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		n := newNotifiedEnv(t, s, envOpts{offerMinutes: 30})
		e := n.env
		first, fa := e.personAgent("first@example.com")
		second, fb := e.personAgent("second@example.com")
		third, fc := e.personAgent("third@example.com")
		holder := e.agentFor(e.account, e.link, "")
		stranger := e.agentFor(e.other, e.newLink(e.other, "stranger-agent"), "")

		held := holder.do(tools.CreateMyBooking, haircut("10:00"), "holder-books-0000001")
		if held.isError || held.Status != "confirmed" {
			t.Fatalf("holder's booking: %s", held.raw)
		}

		want := joinArgs("stf-marcus-reid", "2026-03-04", "2026-03-04", "09:00", "12:00")
		// Bad input: each refused with its own code, nothing written.
		for _, c := range []struct {
			name  string
			args  map[string]any
			code  string
			field string
		}{
			{"window in the past", joinArgs("", "2026-03-01", "2026-03-04", "", ""), "in_the_past", "from_local_date"},
			{"beyond the horizon", joinArgs("", "2026-03-04", "2026-06-30", "", ""), "beyond_booking_horizon", "to_local_date"},
			{"staff who does not perform it", joinArgs("stf-luis-ortega", "2026-03-04", "2026-03-05", "", ""), "staff_service_mismatch", "with_staff_reference"},
			{"backwards", joinArgs("", "2026-03-05", "2026-03-04", "", ""), "invalid_argument", "to_local_date"},
			{"bad time of day", joinArgs("", "2026-03-04", "2026-03-04", "9am", ""), "invalid_time", "earliest_local_time"},
		} {
			a := fa.hcall(tools.JoinMyWaitlist, c.args)
			if !a.isError || a.code() != c.code || (a.Error.Field != "" && strings.ReplaceAll(a.Error.Field, "local_", "") != strings.ReplaceAll(c.field, "local_", "")) {
				t.Errorf("%s: %s", c.name, a.raw)
			}
		}
		if e.count("waitlist_entries") != 0 {
			t.Fatal("a refused request wrote an entry")
		}

		// Join: preview, confirm, replay, conflict.
		pre := fa.hcall(tools.JoinMyWaitlist, want)
		if pre.isError || !strings.Contains(pre.ConfirmedSummary, "Marcus Reid only") || !strings.Contains(pre.ConfirmedSummary, "30 minutes") {
			t.Fatalf("join preview: %s", pre.raw)
		}
		joined := fa.hcall(tools.JoinMyWaitlist, confirmed(want, pre.ConfirmedSummary, "join-key-first-0001"))
		if joined.isError || joined.Status != "waitlisted" || joined.entry(t).Status != "waiting" {
			t.Fatalf("join: %s", joined.raw)
		}
		if a := fa.hcall(tools.JoinMyWaitlist, confirmed(want, pre.ConfirmedSummary, "join-key-first-0001")); !a.IdempotentReplay ||
			a.entry(t).Reference != joined.entry(t).Reference {
			t.Fatalf("join replay: %s", a.raw)
		}
		if a := fa.hcall(tools.JoinMyWaitlist, confirmed(joinArgs("", "2026-03-04", "2026-03-05", "", ""), pre.ConfirmedSummary, "join-key-first-0001")); a.code() != "idempotency_conflict" {
			t.Fatalf("join conflict: %s", a.raw)
		}
		fb.hdo(tools.JoinMyWaitlist, want, "join-key-second-001")
		fc.hdo(tools.JoinMyWaitlist, joinArgs("", "2026-03-04", "2026-03-04", "", ""), "join-key-third-0001")
		if e.count("waitlist_entries") != 3 {
			t.Fatalf("%d entries", e.count("waitlist_entries"))
		}

		// The holder cancels: 10:00 is offered to the first in line.
		cancel := holder.call(tools.CancelMyBooking, map[string]any{"booking_reference": held.Booking.Reference, "grant": held.grant()})
		if a := holder.call(tools.CancelMyBooking, confirmed(map[string]any{"booking_reference": held.Booking.Reference, "grant": held.grant()},
			cancel.ConfirmedSummary, "holder-cancels-00001")); a.isError || a.Status != "cancelled" {
			t.Fatalf("cancel: %s", a.raw)
		}
		w := waitlisted(t, fa)
		if w.Status != "offered" || w.Offer == nil || w.Offer.StaffReference != "stf-marcus-reid" ||
			!w.Offer.StartsAt.Equal(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)) || !w.Offer.HeldUntil.Equal(e.clock.Now().Add(30*time.Minute)) {
			t.Fatalf("first's entry: %+v %+v", w, w.Offer)
		}
		if w2 := waitlisted(t, fb); w2.Status != "waiting" || w2.Offer != nil {
			t.Fatalf("second's entry: %+v", w2)
		}
		_, text := n.mailTo(t, first.Email, "A time opened up")
		if !strings.Contains(text, w.Offer.Reference) {
			t.Fatalf("offer e-mail:\n%s", text)
		}
		if ev := n.hooks.waitFor(t, notify.EventWaitlistOffered, 1)[0]; ev["data"].(map[string]any)["offer"].(map[string]any)["offer_reference"] != w.Offer.Reference {
			t.Fatalf("offer webhook: %v", ev)
		}

		// Held: not shown to anyone, not bookable by anyone else.
		av := stranger.call(tools.CheckBusinessAvailability, map[string]any{"business_reference": "biz-brightcut-barbers",
			"service_reference": "svc-classic-haircut", "local_date": "2026-03-04", "with_staff_reference": "stf-marcus-reid"})
		if strings.Contains(av.raw, "2026-03-04T10:00:00-05:00") {
			t.Fatalf("the held slot is listed: %s", av.raw)
		}
		if a := stranger.call(tools.CreateMyBooking, haircut("10:00")); a.code() != "slot_taken" {
			t.Fatalf("a stranger books the held slot: %s", a.raw)
		}
		if a := fb.call(tools.CreateMyBooking, offerArgs(w.Offer)); a.code() != "offer_not_found" {
			t.Fatalf("another person uses the offer: %s", a.raw)
		}
		_, firstElsewhere := e.personAgentOf(first, "first-other-app")
		if a := firstElsewhere.call(tools.CreateMyBooking, offerArgs(w.Offer)); a.code() != "offer_other_link" {
			t.Fatalf("the offer through another link: %s", a.raw)
		}
		wrong := offerArgs(w.Offer)
		wrong["starts_at"] = "2026-03-04T10:30:00-05:00"
		if a := fa.call(tools.CreateMyBooking, wrong); a.code() != "offer_mismatch" {
			t.Fatalf("another slot with the offer: %s", a.raw)
		}

		// The first books it with the offer.
		mine := fa.do(tools.CreateMyBooking, offerArgs(w.Offer), "first-books-offer-01")
		if mine.isError || mine.Status != "confirmed" {
			t.Fatalf("booking with the offer: %s", mine.raw)
		}
		if es := fa.hcall(tools.SearchMyBookings, map[string]any{"status": "waitlisted"}).entries(t); len(es) != 0 {
			t.Fatalf("a booked entry still listed: %+v", es)
		}

		// Freed again: offered to the second, who lets it lapse.
		c2 := fa.call(tools.CancelMyBooking, map[string]any{"booking_reference": mine.Booking.Reference, "grant": mine.grant()})
		fa.call(tools.CancelMyBooking, confirmed(map[string]any{"booking_reference": mine.Booking.Reference, "grant": mine.grant()},
			c2.ConfirmedSummary, "first-cancels-00001"))
		w2 := waitlisted(t, fb)
		if w2.Offer == nil {
			t.Fatalf("second not offered: %+v", w2)
		}
		worker := &app.WaitlistWorker{Store: s, Engine: booking.NewService(s, e.clock.Now), Notifier: n.notes.Notifier}
		if l, o, err := worker.RunOnce(e.ctx); err != nil || l != 0 || o != 0 {
			t.Fatalf("a pass before the offer ran out: %d %d %v", l, o, err)
		}
		e.clock.Advance(31 * time.Minute)
		if l, o, err := worker.RunOnce(e.ctx); err != nil || l != 1 || o != 1 {
			t.Fatalf("pass: %d lapsed, %d offered, %v", l, o, err)
		}
		// Fresh tokens: the old ones expired with the clock's move.
		fb, fc = e.agentFor(second, fb.link, ""), e.agentFor(third, fc.link, "")
		if a := fb.call(tools.CreateMyBooking, offerArgs(w2.Offer)); a.code() != "offer_lapsed" {
			t.Fatalf("a lapsed offer: %s", a.raw)
		}
		if again := waitlisted(t, fb); again.Status != "waiting" {
			t.Fatalf("the second after the lapse: %+v", again)
		}
		w3 := waitlisted(t, fc)
		if w3.Offer == nil || !w3.Offer.StartsAt.Equal(w2.Offer.StartsAt) {
			t.Fatalf("third not offered the slot: %+v", w3)
		}
		if b := fc.do(tools.CreateMyBooking, offerArgs(w3.Offer), "third-books-offer-01"); b.isError || b.Status != "confirmed" {
			t.Fatalf("third books: %s", b.raw)
		}
		n.mailTo(t, "third@example.com", "A time opened up")
	})
}

// personAgentOf connects an agent for acc through a new client's link.
func (e *env) personAgentOf(acc store.Account, clientID string) (store.Link, agent) {
	e.t.Helper()
	link := e.newLink(acc, clientID)
	return link, e.agentFor(acc, link, "")
}
