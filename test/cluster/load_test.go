package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/bench/report"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

// The cluster load suite (issue 9's "the cluster" figures): opt-in, run by
// make bench at its end.
const loadCommand = "LINKSLOT_CLUSTER_LOAD=1 scripts/with-postgres go test -count=1 -run TestClusterLoad ./test/cluster/"

// Load settings: levels, and each level's bound in time and in operations.
var (
	loadLevels = []int{1, 4, 16, 64}
	loadAgents = 64 // one refresh chain per worker at the top level
)

const loadBusiness, loadService = "biz-cluster-load", "svc-load-cut"

func loadDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("LINKSLOT_CLUSTER_LOAD_DUR")); err == nil && d > 0 && d <= 5*time.Second {
		return d
	}
	return 2 * time.Second
}

const loadMaxOps = 20000 // per level, whatever the duration

// TestClusterLoad measures the cluster — 2 authorization servers and 3
// resource servers as processes on one PostgreSQL — at 1, 4, 16 and 64
// workers, each request sent to the next replica in turn:
//   - refresh: each worker rotates its own refresh-token chain, alternating
//     the authorization servers;
//   - availability-auth: check_business_availability with a bearer token;
//   - create-cancel: a confirmed create then a confirmed cancel (summarize
//     and confirm each, four tool calls), each worker on its own staff
//     member of a load business.
//
// It writes var/bench/cluster-report.txt (the layout of make bench's
// report.txt) and var/bench/cluster-<workload>.svg. Correctness tests
// never assert on speed, and neither does this: it fails only when a
// workload cannot complete a single operation.
func TestClusterLoad(t *testing.T) {
	if os.Getenv("LINKSLOT_CLUSTER_LOAD") != "1" {
		t.Skip("cluster load figures are opt-in: " + loadCommand + " (make bench runs it)")
	}
	began := time.Now()
	out := filepath.Join(moduleRoot(t), "var", "bench")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	c := Start(t, Options{})
	putLoadBusiness(t, c, loadLevels[len(loadLevels)-1])
	linkStart := time.Now()
	agents := linkAgents(t, c, "load", loadAgents)
	// Each agent speaks from its own loopback address, as separate agents
	// do: the resource servers' per-address limit (100/s per replica)
	// would otherwise cap the whole run from 127.0.0.1.
	for i, a := range agents {
		a.HTTP = &http.Client{Transport: agentTransport(i), Timeout: 30 * time.Second}
	}
	t.Logf("linked %d agents through %d authorization servers in %s", len(agents), len(c.AS), time.Since(linkStart).Round(time.Millisecond))
	ctx := context.Background()

	// Warm every replica (JWKS fetch, key and link caches) for every agent.
	day := booking.DemoBarberDay(time.Now(), 3) // a day both haircut barbers work, whatever today is
	avArgs := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut", "local_date": day}
	var warm tally
	parallel(len(agents)*len(c.RS), 16, func(i int) {
		a := agents[i/len(c.RS)]
		warm.add(Call(ctx, a.HTTP, c.RS[i%len(c.RS)], a.Token.AccessToken, "check_business_availability", avArgs).Kind)
	})
	if warm.get("ok") != len(agents)*len(c.RS) {
		t.Fatalf("warm-up availability calls: %s", warm.String())
	}

	dur := loadDuration()
	var results []report.Result
	measure := func(workload string, fn loadOp) {
		for _, n := range loadLevels {
			r := loadLevel(ctx, workload, n, dur, fn)
			t.Logf("%-18s %2d workers: %6d ops %7.0f ops/s  p50 %6.1f ms  p99 %6.1f ms  failures %d %s",
				workload, n, r.Ops, r.Throughput(), report.Ms(r.P50), report.Ms(r.P99), r.Failures, r.FirstErr)
			results = append(results, r)
			if r.Ops > 0 && r.Failures == r.Ops {
				t.Errorf("%s at %d workers: every operation failed; first: %s", workload, n, r.FirstErr)
			}
		}
	}

	// agentFor spreads a worker's operations over its own share of the
	// agents (worker w of n owns agents w, w+n, w+2n, …), so no two
	// workers share a link and no link passes its per-link limit.
	agentFor := func(w, k, n int) *Agent {
		share := max(1, len(agents)/n)
		return agents[(w+(k%share)*n)%len(agents)]
	}
	measure("availability-auth", func(ctx context.Context, w, k, n int) error {
		a := agentFor(w, k, n)
		ans := Call(ctx, a.HTTP, c.RS[(w+k)%len(c.RS)], a.Token.AccessToken, "check_business_availability", avArgs)
		if ans.Kind != "ok" {
			return errors.New("availability: " + ans.Kind)
		}
		return nil
	})

	slot := func() time.Time {
		d := time.Now().UTC().AddDate(0, 0, 2)
		return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, time.UTC)
	}()
	measure("create-cancel", func(ctx context.Context, w, k, n int) error {
		return createCancel(ctx, c, agentFor(w, k, n), (w+k)%len(c.RS), w, slot)
	})

	// Refresh last: rotating a chain replaces the agent's tokens. Each
	// worker rotates the chain of agents[w], at the next authorization
	// server each time.
	chains := make([]string, len(agents))
	for i, a := range agents {
		chains[i] = a.Token.RefreshToken
	}
	measure("refresh", func(ctx context.Context, w, k, n int) error {
		a := agents[w%len(agents)]
		tok, _, err := a.Refresh(ctx, c.AS[(w+k)%len(c.AS)], chains[w%len(agents)])
		if err != nil {
			return errors.New(firstLine(err.Error()))
		}
		chains[w%len(agents)] = tok.RefreshToken
		return nil
	})

	text := clusterReport(results, len(c.AS), len(c.RS), len(agents), dur, time.Since(began))
	t.Logf("\n%s", text)
	if err := os.WriteFile(filepath.Join(out, "cluster-report.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCharts(out, "cluster-", results); err != nil {
		t.Fatal(err)
	}
}

// loadOp is operation k of worker w of n.
type loadOp func(ctx context.Context, w, k, n int) error

// loadLevel runs fn on n workers for dur, at most loadMaxOps operations.
func loadLevel(ctx context.Context, workload string, n int, dur time.Duration, fn loadOp) report.Result {
	return report.Run(ctx, workload, "cluster", n, dur, loadMaxOps, func(ctx context.Context, w, k int) error { return fn(ctx, w, k, n) })
}

// createCancel books worker w's staff member at slot and cancels it, each
// with the confirmation protocol, starting at replica rs and moving to the
// next replica for every call.
func createCancel(ctx context.Context, c *Cluster, a *Agent, rs, w int, slot time.Time) error {
	next := func() *Proc { p := c.RS[rs%len(c.RS)]; rs++; return p }
	mutate := func(tool string, args map[string]any) (Answer, error) {
		sum := Call(ctx, a.HTTP, next(), a.Token.AccessToken, tool, args)
		if sum.Kind != "confirmation_required" {
			return sum, fmt.Errorf("%s summarize: %s", tool, sum.Kind)
		}
		summary := testkit.FindString(sum.Result, "confirmed_summary")
		ans := Call(ctx, a.HTTP, next(), a.Token.AccessToken, tool, testkit.ConfirmedArgs(args, summary, "load-"+randHex(10), confirmText))
		if ans.Kind != "ok" {
			return ans, fmt.Errorf("%s confirm: %s", tool, ans.Kind)
		}
		return ans, nil
	}
	res, err := mutate("create_my_booking", map[string]any{"business_reference": loadBusiness, "service_reference": loadService,
		"staff_reference": loadStaff(w), "starts_at": slot.Format(time.RFC3339)})
	if err != nil {
		return err
	}
	ref, grant := testkit.FindString(res.Result, "booking_reference"), testkit.FindString(res.Result, "grant")
	if ref == "" || grant == "" {
		return errors.New("create answer without booking_reference or grant")
	}
	_, err = mutate("cancel_my_booking", map[string]any{"booking_reference": ref, "grant": grant, "reason": "cluster load"})
	return err
}

func loadStaff(w int) string { return fmt.Sprintf("stf-load-%d", w) }

// putLoadBusiness stores a business open around the clock with one staff
// member per worker, so create-cancel workers never compete for a slot.
func putLoadBusiness(t testing.TB, c *Cluster, workers int) {
	t.Helper()
	var hours []store.HoursWindow
	for d := time.Sunday; d <= time.Saturday; d++ {
		hours = append(hours, store.HoursWindow{Weekday: d, StartMin: 0, EndMin: 24 * 60})
	}
	cat := store.Catalog{
		Business: store.Business{Reference: loadBusiness, Name: "Cluster Load Salon", Category: store.CategoryAppointment, City: "Loadville",
			Address: "2 Loopback Road", TimeZone: "UTC", AgentBooking: true, HorizonDays: 30, SlotIntervalMinutes: 15, Currency: "USD",
			CancellationPolicy: "Free cancellation.", PrivacyNotice: "Notes are visible to the business."},
		OpeningHours: hours,
		Services:     []store.Service{{Reference: loadService, Name: "Load cut", DurationMinutes: 30, PriceCents: 1000, Currency: "USD"}},
		StaffHours:   map[string][]store.HoursWindow{},
	}
	for w := 0; w < workers; w++ {
		cat.Staff = append(cat.Staff, store.Staff{Reference: loadStaff(w), Name: loadStaff(w), ServiceIDs: []string{loadService}})
		cat.StaffHours[loadStaff(w)] = hours
	}
	if _, err := c.Store.PutCatalog(context.Background(), cat); err != nil {
		t.Fatalf("load business: %v", err)
	}
}

// agentTransport connects from loopback address 127.1.x.y, one per agent.
func agentTransport(i int) *http.Transport {
	local := &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(1+i%250))}
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, LocalAddr: local}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
}

// clusterReport is cluster-report.txt: make bench's table layout, then
// what the cluster was and how the load was spread.
func clusterReport(rs []report.Result, as, rsN, agents int, dur, took time.Duration) string {
	var b strings.Builder
	report.WriteHeader(&b, "Linkslot cluster load report", took)
	fmt.Fprintf(&b, "Command: make bench (scripts/bench → %s).\n", loadCommand)
	fmt.Fprintf(&b, "Cluster: %d authorization servers and %d resource servers as processes on one PostgreSQL (LINKSLOT_DB_MAX_CONNS=16 each), load generator in the test process, all on this machine.\n\n", as, rsN)
	report.WriteTable(&b, rs)
	fmt.Fprintf(&b, "\nWorkloads (each level %s or %d operations, whichever comes first; every request to the next replica in turn):\n", dur, loadMaxOps)
	fmt.Fprintf(&b, "  refresh            each worker rotates its own refresh-token chain, alternating the %d authorization servers\n", as)
	fmt.Fprintf(&b, "  availability-auth  check_business_availability with a bearer token, across the %d resource servers\n", rsN)
	fmt.Fprintf(&b, "  create-cancel      summarize+confirm create, then summarize+confirm cancel (4 tool calls), each worker on its own staff member\n")
	fmt.Fprintf(&b, "\nAgents: %d linked through the real pages, each from its own loopback address (127.1.x.y); worker w of n uses agents w, w+n, w+2n, … in turn, so no link passes the per-link limit (20/s per replica).\n", agents)
	if r, ok := report.Find(rs, "refresh", "cluster", 16); ok {
		fmt.Fprintf(&b, "At 16 workers: refresh rotation across the cluster %.0f/s, p99 %.1f ms, failures %d (docs/reference.md §9 judges ratios on one server; these figures are reported, not judged)\n",
			r.Throughput(), report.Ms(r.P99), r.Failures)
	}
	if errs := report.FailureLines(rs); len(errs) > 0 {
		fmt.Fprintf(&b, "\nFailures:\n%s\n", strings.Join(errs, "\n"))
	}
	fmt.Fprintf(&b, "\nCharts: var/bench/cluster-<workload>.svg (throughput and p99 against workers).\n")
	return b.String()
}

// moduleRoot walks up from the working directory to the folder of go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
