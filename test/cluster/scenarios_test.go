package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

// confirmText is what the person says to confirm a mutation (docs/reference.md §5).
const confirmText = "Yes, book it."

// createArgs are create_my_booking's arguments for one race slot.
func createArgs(staff string, start time.Time) map[string]any {
	return map[string]any{"business_reference": RaceBusiness, "service_reference": RaceService,
		"staff_reference": staff, "starts_at": start.Format(time.RFC3339), "notes": "cluster race"}
}

// create runs summarize (on rsA) then confirm (on rsB); the answer is the
// confirm's (or the summarize's when it already failed).
func create(ctx context.Context, a *Agent, rsA, rsB *Proc, args map[string]any, key string) (Answer, Answer) {
	sum := Call(ctx, a.HTTP, rsA, a.Token.AccessToken, "create_my_booking", args)
	if sum.Kind != "confirmation_required" {
		return sum, sum
	}
	summary := testkit.FindString(sum.Result, "confirmed_summary")
	return sum, Call(ctx, a.HTTP, rsB, a.Token.AccessToken, "create_my_booking", testkit.ConfirmedArgs(args, summary, key, confirmText))
}

// confirmedRefs returns the references of the race business's confirmed
// bookings in the database.
func confirmedRefs(t *testing.T, c *Cluster) map[string]bool {
	t.Helper()
	rows, err := c.SQL.Query(`SELECT b.reference FROM bookings b JOIN businesses z ON z.id = b.business_id
		WHERE z.reference = $1 AND b.status = 'confirmed'`, RaceBusiness)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var r string
		rows.Scan(&r)
		out[r] = true
	}
	return out
}

// acceptable: success or a documented error code.
func acceptable(kind string) bool { return kind == "ok" || documentedCodes[kind] }

func raceScenario(t *testing.T, c *Cluster, agents []*Agent) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	day := RaceDay()
	slots := 8 // 10:00, 10:15, … 11:45 — each 35-minute block overlaps its neighbours
	var tl tally
	var mu sync.Mutex
	var slowest time.Duration
	answered := map[string]bool{}
	var sent atomic.Int64
	// Phase 1: every agent asks for its summary (nothing is written).
	confirms := make([]map[string]any, len(agents))
	parallel(len(agents), 32, func(i int) {
		a := agents[i]
		staff := RaceStaff[i%len(RaceStaff)]
		start := day.Add(10*time.Hour + time.Duration((i/len(RaceStaff))%slots)*15*time.Minute)
		args := createArgs(staff, start)
		sent.Add(1)
		sum := Call(ctx, a.HTTP, c.RS[i%len(c.RS)], a.Token.AccessToken, "create_my_booking", args)
		if sum.Kind != "confirmation_required" {
			tl.add("summary:" + sum.Kind)
			return
		}
		confirms[i] = testkit.ConfirmedArgs(args, testkit.FindString(sum.Result, "confirmed_summary"), fmt.Sprintf("race-key-%04d-%s", i, randHex(8)), confirmText)
	})
	// Phase 2: all confirmations at once, each on another replica than its
	// summary, so the writes race in the database.
	parallel(len(agents), 64, func(i int) {
		if confirms[i] == nil {
			return
		}
		a := agents[i]
		sent.Add(1)
		ans := Call(ctx, a.HTTP, c.RS[(i+1)%len(c.RS)], a.Token.AccessToken, "create_my_booking", confirms[i])
		tl.add(ans.Kind)
		mu.Lock()
		slowest = max(slowest, ans.Elapsed)
		mu.Unlock()
		if ans.Kind == "ok" {
			// The race business has no contact address and no webhook
			// endpoint (docs/reference.md §11).
			if n, _ := ans.Result["notified"].(map[string]any); n["person"] != "queued" || n["business"] != "none" || n["webhooks"] != float64(0) {
				tl.add("notified_" + fmt.Sprint(n))
			}
			if ref := testkit.FindString(ans.Result, "booking_reference"); ref != "" {
				mu.Lock()
				answered[ref] = true
				mu.Unlock()
			} else {
				tl.add("ok_without_reference")
			}
		}
	})
	overlaps := c.Overlaps(t)
	inDB := confirmedRefs(t, c)
	missing := 0
	for ref := range answered {
		if !inDB[ref] {
			missing++
		}
	}
	t.Logf("race: %d agents, %d requests sent; %s; slowest confirmation %s; confirmed answers %d, confirmed rows %d; overlaps in SQL: %d; confirmed-but-missing: %d",
		len(agents), sent.Load(), tl.String(), slowest.Round(time.Millisecond), len(answered), len(inDB), overlaps, missing)
	if overlaps != 0 {
		t.Errorf("%d overlapping confirmed bookings", overlaps)
	}
	if missing != 0 {
		t.Errorf("%d bookings answered as confirmed are not in the database", missing)
	}
	if len(answered) == 0 {
		t.Error("no agent got a booking")
	}
	integrity(t, c, "after the race")
	var bad []string
	tl.mu.Lock()
	for k, v := range tl.n {
		if !acceptable(strings.TrimPrefix(k, "summary:")) {
			bad = append(bad, fmt.Sprintf("%d×%s", v, k))
		}
	}
	tl.mu.Unlock()
	if len(bad) == 0 {
		return
	}
	errs := c.Grep(`"tool":"create_my_booking","err"`, 500)
	causes := map[string]int{}
	for _, l := range errs {
		switch {
		case strings.Contains(l, "40P01"):
			causes["deadlock_detected 40P01"]++
		case strings.Contains(l, "57014"):
			causes["statement timeout 57014"]++
		default:
			causes["other"]++
		}
	}
	t.Logf("create_my_booking errors in the servers' logs: %v; first:\n%s", causes, strings.Join(errs[:min(3, len(errs))], "\n"))
	t.Errorf("answers that are neither success nor a documented error code: %s", strings.Join(bad, ", "))
}

func idempotencyScenario(t *testing.T, c *Cluster, a *Agent) {
	ctx := context.Background()
	day := RaceDay().AddDate(0, 0, 1)
	args := createArgs(RaceStaff[0], day.Add(15*time.Hour))
	sum := Call(ctx, a.HTTP, c.RS[0], a.Token.AccessToken, "create_my_booking", args)
	if sum.Kind != "confirmation_required" {
		t.Fatalf("summary: %s %v", sum.Kind, sum.Result)
	}
	key := "idem-across-replicas-" + randHex(8)
	full := testkit.ConfirmedArgs(args, testkit.FindString(sum.Result, "confirmed_summary"), key, confirmText)
	// The same key sent at once to every replica, three times each.
	var tl tally
	refs := map[string]int{}
	var mu sync.Mutex
	parallel(3*len(c.RS), 9, func(i int) {
		ans := Call(ctx, a.HTTP, c.RS[i%len(c.RS)], a.Token.AccessToken, "create_my_booking", full)
		tl.add(ans.Kind)
		if ans.Kind == "ok" {
			mu.Lock()
			refs[testkit.FindString(ans.Result, "booking_reference")]++
			mu.Unlock()
		}
	})
	var rows, acts int
	c.SQL.QueryRow(`SELECT count(*) FROM bookings b JOIN businesses z ON z.id = b.business_id
		WHERE z.reference = $1 AND b.starts_at = $2`, RaceBusiness, day.Add(15*time.Hour)).Scan(&rows)
	c.SQL.QueryRow(`SELECT count(*) FROM activities WHERE idempotency_key = $1`, key).Scan(&acts)
	t.Logf("idempotent retries: 9 requests with one key over %d replicas: %s; distinct references %d; rows %d; activity entries %d",
		len(c.RS), tl.String(), len(refs), rows, acts)
	if tl.get("ok") != 9 || len(refs) != 1 || rows != 1 || acts != 1 {
		t.Errorf("want 9 identical successes, one booking row and one activity entry")
	}
}

// outageScenario stops PostgreSQL under load, restarts it, and checks that
// every answer meanwhile was fast and retryable, that the servers recover
// without a restart, and that every booking answered as confirmed exists.
func outageScenario(t *testing.T, c *Cluster, agents []*Agent) {
	var refreshers []*Agent
	if len(agents) > 12 {
		refreshers = agents[12:min(len(agents), 20)]
		agents = agents[:12]
	}
	const clientTimeout = 20 * time.Second
	// Its own loopback address: the per-address limit is shared by every
	// resource server, and the scenarios after this one must not inherit
	// this one's retries.
	hc := &http.Client{Transport: agentTransport(1000), Timeout: clientTimeout}
	ctx := context.Background()
	var (
		phase     atomic.Int32 // 0 before, 1 outage, 2 after restart
		tl        [3]tally
		slowest   [3]atomic.Int64
		badKinds  tally
		mu        sync.Mutex
		confirmed = map[string]bool{}
		sent      atomic.Int64
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	day := RaceDay().AddDate(0, 0, 2)
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 2000; n++ { // bounded in count, and by stop
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				rs := c.RS[(i+n)%len(c.RS)]
				var ans Answer
				if n%4 == 3 {
					start := day.Add(8*time.Hour + time.Duration((i*50+n)%40)*15*time.Minute)
					var sum Answer
					sum, ans = create(ctx, a, rs, rs, createArgs(RaceStaff[(i+n)%5], start), fmt.Sprintf("outage-%d-%d-%s", i, n, randHex(6)))
					sent.Add(2)
					if sum.Kind != "confirmation_required" {
						ans = sum
					}
					if ans.Kind == "ok" {
						mu.Lock()
						confirmed[testkit.FindString(ans.Result, "booking_reference")] = true
						mu.Unlock()
					}
				} else {
					ans = Call(ctx, hc, rs, a.Token.AccessToken, "check_business_availability",
						map[string]any{"business_reference": RaceBusiness, "service_reference": RaceService,
							"local_date": day.Format("2006-01-02")})
					sent.Add(1)
				}
				tl[p].add(ans.Kind)
				if int64(ans.Elapsed) > slowest[p].Load() {
					slowest[p].Store(int64(ans.Elapsed))
				}
				retryable := ans.Kind == "ok" || ans.Status == http.StatusServiceUnavailable || ans.RetryAfter > 0 ||
					ans.Kind == "slot_taken" || ans.Kind == "summary_changed"
				if !retryable {
					badKinds.add(fmt.Sprintf("phase%d:%s", p, ans.Kind))
				}
				if p == 1 || ans.Kind != "ok" {
					time.Sleep(100 * time.Millisecond)
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	// Token endpoint: each refresher rotates its own chain at alternating
	// authorization servers throughout.
	var rtl [3]tally
	var rslowest [3]atomic.Int64
	ambiguous := make([]bool, len(refreshers))
	for i, b := range refreshers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 2000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				start := time.Now()
				tok, st, err := b.Refresh(ctx, c.AS[(i+n)%len(c.AS)], b.Token.RefreshToken)
				el := time.Since(start)
				if int64(el) > rslowest[p].Load() {
					rslowest[p].Store(int64(el))
				}
				switch {
				case err == nil:
					b.Token.RefreshToken, b.Token.AccessToken = tok.RefreshToken, tok.AccessToken
					rtl[p].add("ok")
				case st == 0:
					rtl[p].add("transport")
					ambiguous[i] = true
				default:
					rtl[p].add(fmt.Sprintf("http_%d", st))
					if st == http.StatusBadRequest || st == http.StatusUnauthorized {
						badKinds.add(fmt.Sprintf("refresh phase%d:http_%d", p, st))
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	phase.Store(1)
	c.PG.Stop()
	downAt := time.Now()
	time.Sleep(4 * time.Second)
	c.PG.Start()
	upAt := time.Now()
	phase.Store(2)
	// Recovery: every server answers successfully again, without a restart.
	recovered := make(map[string]time.Duration)
	a := agents[0]
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range append(append([]*Proc{}, c.RS...), c.AS...) {
		for {
			ok := false
			if p.Name[:2] == "rs" {
				ok = Call(ctx, hc, p, a.Token.AccessToken, "search_my_bookings", map[string]any{}).Kind == "ok"
			} else {
				resp, err := hc.Get(p.Base + "/readyz")
				if err == nil {
					resp.Body.Close()
					ok = resp.StatusCode == 200
				}
			}
			if ok {
				recovered[p.Name] = time.Since(upAt).Round(time.Millisecond)
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s has not recovered 60 s after the database came back", p.Name)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	// A refresh works again on both authorization servers.
	for _, as := range c.AS {
		b := agents[len(agents)-1]
		tok, st, err := b.Refresh(ctx, as, b.Token.RefreshToken)
		if err != nil {
			t.Errorf("%s: refresh after the outage: %d %v", as.Name, st, err)
			continue
		}
		b.Token.RefreshToken = tok.RefreshToken
	}
	inDB := confirmedRefs(t, c)
	missing := 0
	for ref := range confirmed {
		if ref != "" && !inDB[ref] {
			missing++
		}
	}
	t.Logf("outage: %d requests sent; database down %s", sent.Load(), upAt.Sub(downAt).Round(time.Millisecond))
	for p, name := range []string{"before", "during", "after"} {
		t.Logf("  %s: %s; slowest %s", name, tl[p].String(), time.Duration(slowest[p].Load()).Round(time.Millisecond))
	}
	for p, name := range []string{"before", "during", "after"} {
		t.Logf("  refresh rotation %s: %s; slowest %s", name, rtl[p].String(), time.Duration(rslowest[p].Load()).Round(time.Millisecond))
	}
	t.Logf("  recovery after restart: %v; confirmed answers %d, confirmed-but-missing %d; non-retryable answers: %s",
		recovered, len(confirmed), missing, badKinds.String())
	if missing != 0 {
		t.Errorf("%d bookings answered as confirmed are missing", missing)
	}
	if s := time.Duration(slowest[1].Load()); s >= clientTimeout {
		t.Errorf("a request hung for %s during the outage", s)
	}
	badKinds.mu.Lock()
	defer badKinds.mu.Unlock()
	for k, v := range badKinds.n {
		t.Errorf("%d answers %s: neither success nor a retryable error (503 / retry_after_sec)", v, k)
	}
	if n := c.Overlaps(t); n != 0 {
		t.Errorf("%d overlaps after the outage", n)
	}
	integrity(t, c, "after the outage")
}

// slowScenario puts a delaying proxy between a fourth resource server and
// the database: answers stay clean (success or a retryable error) and
// bounded, and the server recovers when the delay goes away.
func slowScenario(t *testing.T, c *Cluster, a *Agent) {
	px := NewDelayProxy(t, fmt.Sprintf("127.0.0.1:%d", c.PG.Port))
	url := fmt.Sprintf("postgres://linkslot@%s/postgres?sslmode=disable&statement_timeout=1000", px.Addr)
	rs := c.StartExtraRS(t, "rs-slow", url)
	ctx := context.Background()
	// Its own loopback address, apart from the scenarios before it (the
	// per-address limit is shared by every resource server).
	slowTransport := agentTransport(1001)
	hc := &http.Client{Transport: slowTransport, Timeout: 30 * time.Second}
	call := func() Answer {
		return Call(ctx, hc, rs, a.Token.AccessToken, "check_business_availability",
			map[string]any{"business_reference": RaceBusiness, "service_reference": RaceService,
				"local_date": RaceDay().Format("2006-01-02")})
	}
	if ans := call(); ans.Kind != "ok" {
		t.Fatalf("before the delay: %s", ans.Kind)
	}
	var tl tally
	var slowest time.Duration
	for _, step := range []struct {
		delay time.Duration
		calls int
	}{{300 * time.Millisecond, 2}, {time.Second, 1}} {
		px.SetDelay(step.delay)
		for i := 0; i < step.calls; i++ {
			ans := call()
			tl.add(fmt.Sprintf("delay%s:%s", step.delay, ans.Kind))
			slowest = max(slowest, ans.Elapsed)
			if !(ans.Kind == "ok" || ans.Status == http.StatusServiceUnavailable || ans.RetryAfter > 0) {
				t.Errorf("delay %s: answer %s (status %d) is neither success nor retryable", step.delay, ans.Kind, ans.Status)
			}
		}
	}
	// A database that stops answering altogether (full form only: it
	// costs half a minute): the caller gives up after 15 s; a server-side
	// deadline would have answered a retryable error first.
	var hung time.Duration
	if full() {
		px.SetDelay(20 * time.Second)
		short := &http.Client{Transport: slowTransport, Timeout: 15 * time.Second}
		ans := Call(ctx, short, rs, a.Token.AccessToken, "search_my_bookings", map[string]any{})
		hung = ans.Elapsed
		tl.add("hung-database:" + ans.Kind)
	}
	px.SetDelay(0)
	var back time.Duration
	t0 := time.Now()
	for time.Since(t0) < 30*time.Second {
		if call().Kind == "ok" {
			back = time.Since(t0)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("slow database: %s; slowest %s; ok again %s after the delay was removed", tl.String(), slowest.Round(time.Millisecond), back.Round(time.Millisecond))
	if back == 0 {
		t.Error("no success within 30 s after the delay was removed")
	}
	if hung > slowBound {
		slowest = max(slowest, hung)
	}
	// The database's statement timeout is 10 s by default; a tool call should
	// not outlast it by much. The resource server's request deadline
	// (LINKSLOT_REQUEST_TIMEOUT, 10 s) bounds the round trips too, however
	// many a call makes.
	if slowest > slowBound {
		t.Errorf("a tool call took %s against a slow or hung database (bound %s): the request deadline did not end its database work",
			slowest.Round(time.Millisecond), slowBound)
	}
}

// slowBound is what a caller may wait for one answer from a server whose
// database is slow: the default statement timeout plus margin.
const slowBound = 12 * time.Second

// killScenario kills one resource server with SIGKILL while confirmed
// creates are in flight on it, then checks every booking has its activity
// entry and its finished idempotency record, and that retrying the killed
// requests' keys on another replica answers definitely.
func killScenario(t *testing.T, c *Cluster, agents []*Agent) {
	if len(agents) > 16 {
		agents = agents[:16]
	}
	ctx := context.Background()
	victim := c.RS[2]
	day := RaceDay().AddDate(0, 0, 4)
	type req struct {
		a    *Agent
		args map[string]any
		key  string
	}
	reqs := make([]req, len(agents))
	// Summaries first (on a surviving replica), so the kill lands on confirms.
	for i, a := range agents {
		args := createArgs(RaceStaff[i%5], day.Add(8*time.Hour+time.Duration(i/5)*45*time.Minute))
		sum := Call(ctx, a.HTTP, c.RS[0], a.Token.AccessToken, "create_my_booking", args)
		if sum.Kind != "confirmation_required" {
			t.Fatalf("summary: %s", sum.Kind)
		}
		reqs[i] = req{a, testkit.ConfirmedArgs(args, testkit.FindString(sum.Result, "confirmed_summary"), "kill-"+randHex(10), confirmText), ""}
		reqs[i].key = reqs[i].args["idempotency_key"].(string)
	}
	var tl tally
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 3 * time.Millisecond)
			tl.add(Call(ctx, r.a.HTTP, victim, r.a.Token.AccessToken, "create_my_booking", r.args).Kind)
		}()
	}
	time.Sleep(25 * time.Millisecond)
	victim.Kill()
	wg.Wait()
	t.Logf("SIGKILL mid-mutation: %d confirms sent to %s: %s", len(reqs), victim.Name, tl.String())

	integrity(t, c, "after the kill")
	// Every killed request retried with its key on a survivor: a definite answer.
	var retry tally
	for _, r := range reqs {
		retry.add(Call(ctx, r.a.HTTP, c.RS[1], r.a.Token.AccessToken, "create_my_booking", r.args).Kind)
	}
	t.Logf("  retries on rs2 with the same keys: %s", retry.String())
	retry.mu.Lock()
	for k, v := range retry.n {
		if !acceptable(k) {
			t.Errorf("%d retries answered %s", v, k)
		}
	}
	retry.mu.Unlock()
	if n := c.Overlaps(t); n != 0 {
		t.Errorf("%d overlaps", n)
	}
	victim.Restart(t)
}

// integrity checks that no mutation was half written: every booking an
// agent created has its Activity entry, every Activity entry has its
// finished idempotency record, and no idempotency record is left pending.
func integrity(t *testing.T, c *Cluster, when string) {
	t.Helper()
	var orphanBookings, orphanActivities, pending int
	c.SQL.QueryRow(`SELECT count(*) FROM bookings b JOIN businesses z ON z.id = b.business_id
		WHERE z.reference = $1 AND b.link_id <> '' AND NOT EXISTS
		(SELECT 1 FROM activities a WHERE a.link_id = b.link_id AND a.tool = 'create_my_booking'
		 AND a.arguments LIKE '%' || to_char(b.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') || '%')`,
		RaceBusiness).Scan(&orphanBookings)
	c.SQL.QueryRow(`SELECT count(*) FROM activities a WHERE a.idempotency_key <> '' AND NOT EXISTS
		(SELECT 1 FROM idempotency_records r WHERE r.link_id = a.link_id AND r.key = a.idempotency_key AND r.state = 'done')`).Scan(&orphanActivities)
	c.SQL.QueryRow(`SELECT count(*) FROM idempotency_records WHERE state = 'pending'`).Scan(&pending)
	t.Logf("  integrity %s: bookings without activity %d, activities without a finished idempotency record %d, pending idempotency records %d",
		when, orphanBookings, orphanActivities, pending)
	if orphanBookings != 0 || orphanActivities != 0 || pending != 0 {
		t.Errorf("half-written mutation state %s", when)
	}
}

// parallelRefreshScenario: 2, 8 and 32 concurrent refreshes with one
// refresh token, sent to both authorization servers in turn, all answer
// 200 with one successor (the refresh grace, docs/reference.md §14); the
// family then has one live refresh token, which rotates at either server.
func parallelRefreshScenario(t *testing.T, c *Cluster) {
	ctx := context.Background()
	counts := []int{2, 8, 32}
	fresh := linkAgents(t, c, "grace", len(counts))
	for i, n := range counts {
		a := fresh[i]
		old := a.Token.RefreshToken
		var mu sync.Mutex
		successors := map[string]int{}
		var failures []string
		parallel(n, n, func(k int) {
			tok, st, err := a.Refresh(ctx, c.AS[k%len(c.AS)], old)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, fmt.Sprintf("%d %s", st, firstLine(err.Error())))
				return
			}
			successors[tok.RefreshToken]++
		})
		ok := n - len(failures)
		t.Logf("two authorization servers on one PostgreSQL: %d concurrent refreshes with one token: %d answered 200, %d distinct successors", n, ok, len(successors))
		if ok != n || len(successors) != 1 {
			t.Fatalf("%d concurrent refreshes: %d answered 200 with %d distinct refresh tokens, want %d with one; failures %q", n, ok, len(successors), n, failures)
		}
		for successor := range successors {
			if live := liveRefreshTokens(t, c, successor); live != 1 {
				t.Fatalf("%d live refresh tokens in the family after %d concurrent refreshes, want 1", live, n)
			}
			next, st, err := a.Refresh(ctx, c.AS[1], successor)
			if err != nil {
				t.Fatalf("the successor at as2: %d %v", st, err)
			}
			if _, st, err := a.Refresh(ctx, c.AS[0], next.RefreshToken); err != nil {
				t.Fatalf("a second rotation, at as1: %d %v", st, err)
			}
		}
	}
}

// liveRefreshTokens counts the active refresh tokens of the family of the
// refresh token rt.
func liveRefreshTokens(t *testing.T, c *Cluster, rt string) int {
	t.Helper()
	sig := store.HashSecret(rt[strings.LastIndexByte(rt, '.')+1:])
	var n int
	err := c.SQL.QueryRow(`SELECT count(*) FROM token_sessions WHERE kind = 'refresh_token' AND active AND request_id =
(SELECT request_id FROM token_sessions WHERE kind = 'refresh_token' AND signature_hash = $1)`, sig).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
