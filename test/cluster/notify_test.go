package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	netmail "net/mail"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

// notifyLease is the outbox lease the notification cluster runs with
// (LINKSLOT_OUTBOX_LEASE), short so that the crash scenario's wait for an
// expired lease stays a few seconds.
const notifyLease = 5 * time.Second

const notifyAdminToken = "cluster-admin-token-0123456789"

// arrival is one webhook request as the receiver saw it.
type arrival struct {
	id, endpoint, booking string
	at                    time.Time
	// acked: answered 2xx to a sender still connected. A request whose
	// sender died while the receiver held it is not acked: the sender
	// never learnt of it, so it is delivered again (at least once).
	acked bool
}

// hookReceiver is the business's webhook endpoints (/a and /b), verifying
// every delivery with the Standard Webhooks reference library. When a trap
// is armed, the first delivery leased by a resource server process springs
// it: that delivery, and every other one the same process sends, is held
// until the process dies.
type hookReceiver struct {
	t   *testing.T
	c   *Cluster
	srv *httptest.Server

	mu       sync.Mutex
	refs     map[string]*standardwebhooks.Webhook // by endpoint path
	arrivals []arrival
	trap     chan trapped // armed when not nil; sprung once
	victim   *Proc        // once sprung: every delivery it leases is held
}

type trapped struct {
	id, owner, leaseUntil string
	proc                  *Proc
}

func newHookReceiver(t *testing.T, c *Cluster) *hookReceiver {
	h := &hookReceiver{t: t, c: c, refs: map[string]*standardwebhooks.Webhook{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) setSecret(path, secret string) {
	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	h.refs[path] = ref
	h.mu.Unlock()
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	ref := h.refs[r.URL.Path]
	trap, victim := h.trap, h.victim
	h.mu.Unlock()
	if ref == nil || ref.Verify(body, r.Header) != nil {
		h.t.Errorf("unverifiable delivery to %s (webhook-id %q)", r.URL.Path, r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev struct {
		Data struct {
			Booking struct {
				Reference string `json:"booking_reference"`
			} `json:"booking"`
		} `json:"data"`
	}
	json.Unmarshal(body, &ev)
	a := arrival{id: r.Header.Get("webhook-id"), endpoint: r.URL.Path, booking: ev.Data.Booking.Reference, at: time.Now()}
	if trap != nil || victim != nil {
		if tr, ok := h.leasedByResourceServer(a.id); ok {
			h.mu.Lock()
			first := h.trap != nil
			if first {
				h.trap, h.victim = nil, tr.proc
			}
			hold := h.victim == tr.proc
			h.mu.Unlock()
			if first {
				trap <- tr
			}
			if hold {
				select {
				case <-r.Context().Done(): // the sender died
					h.record(a)
					return
				case <-time.After(30 * time.Second):
					w.WriteHeader(http.StatusServiceUnavailable)
					h.record(a)
					return
				}
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
	a.acked = true
	h.record(a)
}

func (h *hookReceiver) record(a arrival) {
	h.mu.Lock()
	h.arrivals = append(h.arrivals, a)
	h.mu.Unlock()
}

// leasedByResourceServer reads who holds the message's lease (the owner is
// host/pid/suffix) and answers when it is one of the resource servers.
func (h *hookReceiver) leasedByResourceServer(id string) (trapped, bool) {
	var owner string
	var until time.Time
	if err := h.c.SQL.QueryRow(`SELECT lease_owner, lease_until FROM outbox_messages WHERE id = $1`, id).Scan(&owner, &until); err != nil {
		return trapped{}, false
	}
	parts := strings.Split(owner, "/")
	if len(parts) != 3 {
		return trapped{}, false
	}
	pid, _ := strconv.Atoi(parts[1])
	for _, p := range h.c.RS {
		if p.cmd != nil && p.cmd.Process.Pid == pid {
			return trapped{id: id, owner: owner, leaseUntil: until.UTC().Format(time.RFC3339Nano), proc: p}, true
		}
	}
	return trapped{}, false
}

func (h *hookReceiver) snapshot() []arrival {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]arrival(nil), h.arrivals...)
}

// outboxRow is a message as the database has it.
type outboxRow struct {
	id, channel, topic, status, booking string
	attempts                            int
}

func (c *Cluster) outbox(t *testing.T) map[string]outboxRow {
	t.Helper()
	// Reminders are due before the appointments, days from now: they are
	// left out (internal/notify's reminder tests hold them).
	rows, err := c.SQL.Query(`SELECT m.id, m.channel, m.topic, m.status, m.attempts, coalesce(b.reference, '')
		FROM outbox_messages m LEFT JOIN bookings b ON b.id = m.booking_id WHERE m.topic <> 'booking.reminder'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]outboxRow{}
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.id, &r.channel, &r.topic, &r.status, &r.attempts, &r.booking); err != nil {
			t.Fatal(err)
		}
		out[r.id] = r
	}
	return out
}

// waitDelivered waits until every outbox message is delivered.
func (c *Cluster) waitDelivered(t *testing.T, timeout time.Duration) map[string]outboxRow {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ms := c.outbox(t)
		left := 0
		for _, m := range ms {
			if m.status != store.OutboxDelivered {
				left++
			}
		}
		if left == 0 {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d outbox messages not delivered after %s", left, len(ms), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// attemptsBy counts recorded delivery attempts by process name.
func (c *Cluster) attemptsBy(t *testing.T) map[string]int {
	t.Helper()
	rows, err := c.SQL.Query(`SELECT owner, count(*) FROM delivery_attempts GROUP BY owner`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var owner string
		var n int
		rows.Scan(&owner, &n)
		out[c.procOfOwner(owner)] += n
	}
	return out
}

func (c *Cluster) procOfOwner(owner string) string {
	parts := strings.Split(owner, "/")
	if len(parts) == 3 {
		pid, _ := strconv.Atoi(parts[1])
		for _, p := range append(append([]*Proc{}, c.AS...), c.RS...) {
			if p.cmd != nil && p.cmd.Process.Pid == pid {
				return p.Name
			}
		}
	}
	return "other:" + owner
}

// mailIDs counts the SMTP server's messages by outbox id (the Message-ID
// is <OUTBOX-ID@host>).
func mailIDs(t *testing.T, smtpd *testkit.SMTPServer) map[string]int {
	ids := map[string]int{}
	for _, m := range smtpd.Mails() {
		msg, err := netmail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatalf("unparseable e-mail: %v", err)
		}
		id := strings.Trim(msg.Header.Get("Message-Id"), "<>")
		if i := strings.LastIndex(id, "@"); i > 0 {
			id = id[:i]
		}
		ids[id]++
	}
	return ids
}

// TestNotificationsAcrossProcesses: three resource server processes on
// one PostgreSQL, each with its outbox worker, a real SMTP server (go-smtp)
// and a business with a contact address and two webhook endpoints made
// through the authorization server's /admin/api/webhooks. The agents link
// through the authorization server, which then stops, so the three
// resource servers alone deliver what follows.
//
//   - ExactlyOnce: 100 bookings confirmed at once across the resource
//     servers; every message reaches its receiver exactly once per id (the
//     webhook-id at the endpoints, the Message-ID at the SMTP server), with
//     one recorded attempt each.
//   - KilledHoldingLeases: a resource server is killed with SIGKILL while it
//     holds the leases of messages of committed bookings, one of them in
//     flight at the endpoint. Nothing is lost: once the lease expires the
//     other processes deliver every message, the held one with its original
//     webhook-id, and nothing arrives twice except the attempt the dead
//     process never finished.
func TestNotificationsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("the cluster starts PostgreSQL and four server processes")
	}
	smtpd := testkit.NewSMTPServer(t)
	c := Start(t, Options{AuthServers: 1, ExtraEnv: []string{"LINKSLOT_SMTP_URL=" + smtpd.URL(),
		"LINKSLOT_OUTBOX_LEASE=" + notifyLease.String(), "LINKSLOT_ADMIN_TOKEN=" + notifyAdminToken}})
	c.PutRaceBusiness(t, func(cat *store.Catalog) { cat.Business.ContactEmail = "desk@race.example" })
	hooks := newHookReceiver(t, c)
	for _, path := range []string{"/a", "/b"} {
		secret := createEndpoint(t, c, hooks.srv.URL+path)
		hooks.setSecret(path, secret)
	}
	const nAgents, perAgent = 10, 10
	agents := linkAgents(t, c, "notify", nAgents)
	for i, a := range agents {
		a.HTTP = &http.Client{Transport: agentTransport(100 + i), Timeout: 30 * time.Second}
	}
	// From here on only the three resource servers deliver: each has
	// verified a token (so holds the issuer's keys) before the
	// authorization server stops.
	for _, rs := range c.RS {
		if ans := Call(context.Background(), agents[0].HTTP, rs, agents[0].Token.AccessToken, "search_my_bookings", map[string]any{}); ans.Kind != "ok" {
			t.Fatalf("%s: %s", rs.Name, ans.Kind)
		}
	}
	stop(t, c.AS[0])

	t.Run("ExactlyOnce", func(t *testing.T) {
		n := nAgents * perAgent
		slot := func(k int) map[string]any {
			i := k / len(RaceStaff) // 0..19: 16 slots 45 minutes apart a day
			start := RaceDay().AddDate(0, 0, i/16).Add(8*time.Hour + time.Duration(i%16)*45*time.Minute)
			return createArgs(RaceStaff[k%len(RaceStaff)], start)
		}
		refs := confirmAll(t, c, agents, n, slot, func(k int) *Proc { return c.RS[(k+1)%len(c.RS)] })
		if len(refs) != n {
			t.Fatalf("%d of %d bookings confirmed", len(refs), n)
		}
		ms := c.waitDelivered(t, 90*time.Second)
		time.Sleep(500 * time.Millisecond) // room for a duplicate to show up
		checkOnce(t, c, ms, hooks.snapshot(), mailIDs(t, smtpd), nil, "")
		perBooking := map[string]int{}
		for _, m := range ms {
			if m.booking != "" {
				perBooking[m.booking]++
			}
		}
		for ref := range refs {
			if perBooking[ref] != 4 { // the person's and the business's e-mails, one event per endpoint
				t.Errorf("booking %s has %d outbox messages, want 4", ref, perBooking[ref])
			}
		}
		t.Logf("%d bookings at once on %d resource servers: %d outbox messages (%d for the bookings), all delivered; attempts by process %v",
			len(refs), len(c.RS), len(ms), 4*len(refs), c.attemptsBy(t))
	})

	t.Run("KilledHoldingLeases", func(t *testing.T) {
		before := len(c.outbox(t))
		trap := make(chan trapped, 1)
		hooks.mu.Lock()
		hooks.trap = trap
		hooks.mu.Unlock()
		day := RaceDay().AddDate(0, 0, 5)
		slot := func(k int) map[string]any {
			return createArgs(RaceStaff[k%len(RaceStaff)], day.Add(8*time.Hour+time.Duration(k/len(RaceStaff))*45*time.Minute))
		}
		type result struct{ refs map[string]bool }
		done := make(chan result, 1)
		go func() {
			done <- result{confirmAll(t, c, agents, nAgents, slot, func(k int) *Proc { return c.RS[k%len(c.RS)] })}
		}()
		var tr trapped
		select {
		case tr = <-trap:
		case <-time.After(60 * time.Second):
			t.Fatal("no webhook delivery leased by a resource server reached the endpoint")
		}
		tr.proc.Kill()
		killedAt := time.Now()
		<-tr.proc.done
		var held []string // what the victim held as it died
		rows, err := c.SQL.Query(`SELECT id FROM outbox_messages WHERE lease_owner = $1 AND status = 'queued'`, tr.owner)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			rows.Scan(&id)
			held = append(held, id)
		}
		rows.Close()
		refs := (<-done).refs
		if len(refs) != nAgents {
			t.Fatalf("%d of %d bookings confirmed", len(refs), nAgents)
		}
		ms := c.waitDelivered(t, 60*time.Second)
		time.Sleep(500 * time.Millisecond)
		arrivals := hooks.snapshot()
		heldSet := map[string]bool{}
		for _, id := range held {
			heldSet[id] = true
		}
		checkOnce(t, c, ms, arrivals, mailIDs(t, smtpd), heldSet, tr.owner)

		// The held delivery: lost with the process, then delivered by a
		// survivor after the lease expired, with the same webhook-id.
		var lost, again []arrival
		for _, a := range arrivals {
			if a.id == tr.id {
				if a.acked {
					again = append(again, a)
				} else {
					lost = append(lost, a)
				}
			}
		}
		if len(lost) != 1 || len(again) != 1 {
			t.Fatalf("webhook %s: %d unanswered and %d answered arrivals, want 1 and 1", tr.id, len(lost), len(again))
		}
		until, _ := time.Parse(time.RFC3339Nano, tr.leaseUntil)
		var owner string
		var at time.Time
		if err := c.SQL.QueryRow(`SELECT owner, at FROM delivery_attempts WHERE message_id = $1 AND ok`, tr.id).Scan(&owner, &at); err != nil {
			t.Fatal(err)
		}
		if owner == tr.owner || c.procOfOwner(owner) == tr.proc.Name || at.Before(until) || ms[tr.id].attempts < 2 {
			t.Errorf("webhook %s delivered by %s at %s (lease until %s), attempts %d", tr.id, c.procOfOwner(owner), at, until, ms[tr.id].attempts)
		}
		var byVictim int
		c.SQL.QueryRow(`SELECT count(*) FROM delivery_attempts WHERE owner = $1`, tr.owner).Scan(&byVictim)
		// Each held message is delivered: again by a survivor, or — when
		// the dead process's last statement (its outcome) reached the
		// database and committed after the kill — by that one attempt.
		recovered, posthumous := 0, 0
		for _, id := range held {
			m := ms[id]
			var okOwner string
			c.SQL.QueryRow(`SELECT owner FROM delivery_attempts WHERE message_id = $1 AND ok ORDER BY attempt DESC LIMIT 1`, id).Scan(&okOwner)
			switch {
			case m.status == store.OutboxDelivered && m.attempts >= 2 && okOwner != tr.owner:
				recovered++
			case m.status == store.OutboxDelivered && m.attempts == 1 && okOwner == tr.owner:
				posthumous++
			default:
				t.Errorf("held message %s: %s after %d attempts, last successful one by %s", id, m.status, m.attempts, c.procOfOwner(okOwner))
			}
		}
		t.Logf("of the %d held messages, %d were delivered again by the survivors and %d by the killed process's own last, already sent, outcome",
			len(held), recovered, posthumous)
		t.Logf("%s killed with SIGKILL holding %d leased messages (one of them, webhook-id %s, in flight at the endpoint); "+
			"its lease ran to %s; after %s the survivors delivered all %d new messages, the held one again with its webhook-id "+
			"(by %s, attempt %d); the killed process recorded %d attempts in its life; attempts by process %v",
			tr.proc.Name, len(held), tr.id, until.Sub(killedAt).Round(time.Millisecond), again[0].at.Sub(killedAt).Round(time.Millisecond),
			len(ms)-before, c.procOfOwner(owner), ms[tr.id].attempts, byVictim, c.attemptsBy(t))
	})
}

// stop ends a server gracefully (SIGTERM) and waits for it.
func stop(t *testing.T, p *Proc) {
	t.Helper()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not stop", p.Name)
	}
}

// createEndpoint registers a webhook endpoint of the race business through
// the admin API and returns its secret.
func createEndpoint(t *testing.T, c *Cluster, url string) string {
	t.Helper()
	body := fmt.Sprintf(`{"business":%q,"url":%q}`, RaceBusiness, url)
	req, _ := http.NewRequest(http.MethodPost, c.AS[0].Base+"/admin/api/webhooks", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+notifyAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(resp)
	var got struct {
		Secret string `json:"secret"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(raw), &got) != nil || !strings.HasPrefix(got.Secret, "whsec_") {
		t.Fatalf("POST /admin/api/webhooks: %d %s", resp.StatusCode, raw)
	}
	return got.Secret
}

// confirmAll asks for n summaries (booking k by agent k mod len(agents),
// on rs1), then sends every confirmation at once, booking k's to
// confirmAt(k); a confirmation whose server died is retried with its key
// on the next ones. It returns the confirmed references.
func confirmAll(t *testing.T, c *Cluster, agents []*Agent, n int, args func(k int) map[string]any, confirmAt func(k int) *Proc) map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	confirms := make([]map[string]any, n)
	parallel(n, 32, func(k int) {
		a := agents[k%len(agents)]
		sum := Call(ctx, a.HTTP, c.RS[0], a.Token.AccessToken, "create_my_booking", args(k))
		if sum.Kind != "confirmation_required" {
			t.Errorf("summary %d: %s", k, sum.Kind)
			return
		}
		confirms[k] = testkit.ConfirmedArgs(args(k), testkit.FindString(sum.Result, "confirmed_summary"), "notify-"+randHex(10), confirmText)
	})
	var mu sync.Mutex
	refs := map[string]bool{}
	var tl tally
	parallel(n, n, func(k int) {
		if confirms[k] == nil {
			return
		}
		a := agents[k%len(agents)]
		ans := Call(ctx, a.HTTP, confirmAt(k), a.Token.AccessToken, "create_my_booking", confirms[k])
		for try := 0; ans.Kind != "ok" && try < 3 && (ans.Kind == "transport" || strings.HasPrefix(ans.Kind, "http_5")); try++ {
			ans = Call(ctx, a.HTTP, c.RS[(k+try+1)%len(c.RS)], a.Token.AccessToken, "create_my_booking", confirms[k])
		}
		tl.add(ans.Kind)
		if ans.Kind != "ok" {
			return
		}
		n, _ := ans.Result["notified"].(map[string]any)
		if n["person"] != "queued" || n["business"] != "queued" || n["webhooks"] != float64(2) {
			t.Errorf("booking %d notified %v, want the person, the business and 2 webhooks", k, n)
		}
		mu.Lock()
		refs[testkit.FindString(ans.Result, "booking_reference")] = true
		mu.Unlock()
	})
	if tl.get("ok") != n {
		t.Errorf("confirmations: %s", tl.String())
	}
	return refs
}

// checkOnce holds every outbox message to exactly one acknowledged
// delivery: each webhook once acked at the endpoints under its id, each
// e-mail once at the SMTP server under its id, nothing unknown. A message
// may arrive a second time only when it is in retried (the killed
// process, lease owner killed, held it) and the outbox counts a second
// attempt.
func checkOnce(t *testing.T, c *Cluster, ms map[string]outboxRow, arrivals []arrival, mails map[string]int, retried map[string]bool, killed string) {
	t.Helper()
	acked, seen := map[string]int{}, map[string]int{}
	for _, a := range arrivals {
		seen[a.id]++
		if a.acked {
			acked[a.id]++
		}
		if m, ok := ms[a.id]; !ok || m.channel != store.ChannelWebhook || m.booking != a.booking {
			t.Errorf("webhook %s (booking %s) is not an outbox webhook message of that booking", a.id, a.booking)
		}
	}
	var hooks, emails, dupHooks, dupMails int
	for id, m := range ms {
		switch m.channel {
		case store.ChannelWebhook:
			hooks++
			if acked[id] != 1 {
				t.Errorf("webhook %s acknowledged %d times", id, acked[id])
			}
			if seen[id] > 1 {
				dupHooks++
				if !retried[id] || m.attempts < 2 {
					t.Errorf("webhook %s arrived %d times, attempts %d: not the retry of an unfinished attempt", id, seen[id], m.attempts)
				}
			}
		case store.ChannelEmail:
			emails++
			switch {
			case mails[id] == 1:
			case mails[id] > 1 && retried[id] && m.attempts >= 2:
				dupMails++
			default:
				t.Errorf("e-mail %s (%s) received %d times, attempts %d", id, m.topic, mails[id], m.attempts)
			}
		}
	}
	for id := range mails {
		if _, ok := ms[id]; !ok {
			t.Errorf("e-mail %s is not an outbox message", id)
		}
	}
	// The database records exactly one successful attempt per message: an
	// attempt row commits with the message's outcome (FinishAttempt), so
	// the killed process either marked a message delivered or left no
	// successful attempt of it. Reminders, due days later, are left out as
	// in outbox.
	rows, err := c.SQL.Query(`SELECT m.id, count(a.message_id), count(a.message_id) FILTER (WHERE a.owner = $1)
		FROM outbox_messages m LEFT JOIN delivery_attempts a ON a.message_id = m.id AND a.ok
		WHERE m.topic <> 'booking.reminder' GROUP BY m.id`, killed)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var byKilledTotal int
	for rows.Next() {
		var id string
		var ok, byKilled int
		if err := rows.Scan(&id, &ok, &byKilled); err != nil {
			t.Fatal(err)
		}
		byKilledTotal += byKilled
		if ok != 1 {
			t.Errorf("message %s has %d successful recorded attempts (%d by the killed process)", id, ok, byKilled)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var sumMails int
	for _, n := range mails {
		sumMails += n
	}
	t.Logf("outbox: %d webhook messages → %d arrivals, %d acknowledged once each, %d arrived again as the retry of an unfinished attempt; "+
		"%d e-mails → %d at the SMTP server, %d distinct, %d again as such a retry; duplicates otherwise: 0 unless reported above; "+
		"successful attempts recorded by the killed process: %d, every message exactly one",
		hooks, len(arrivals), len(acked), dupHooks, emails, sumMails, len(mails), dupMails, byKilledTotal)
}
