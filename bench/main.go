package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/bench/report"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/testkit"
)

// growthRows is the size of the growth step (spent token sessions): -growth.
var growthRows int

// result of one workload at one concurrency (the shared report's row).
type result = report.Result

// op is one operation of worker w.
type op func(ctx context.Context, w int) error

// profiled is the workload (workload/backend/workers, as the report names
// it) whose runs -cpuprofile records, and where.
var profiled struct {
	match string
	path  string
	n     int
}

// only, when set (-only), is the workloads to run; the others are skipped
// (for quick checks and profiles: the report then has only those).
var only *regexp.Regexp

func wanted(workload string) bool { return only == nil || only.MatchString(workload) }

// run runs op on n workers for dur (at most maxOps operations in all). A
// workload -only leaves out answers an empty result, which record drops.
func run(ctx context.Context, workload, backend string, n int, dur time.Duration, maxOps int64, fn op) result {
	if !wanted(workload) {
		return result{}
	}
	if stop := startProfile(fmt.Sprintf("%s/%s/%d", workload, backend, n)); stop != nil {
		defer stop()
	}
	return report.Run(ctx, workload, backend, n, dur, maxOps, func(ctx context.Context, w, _ int) error { return fn(ctx, w) })
}

// startProfile starts the CPU profile of a run or window that -profile
// names (the first; later ones go to numbered files) and returns what stops
// it, or nil.
func startProfile(name string) func() {
	if profiled.path == "" || name != profiled.match {
		return nil
	}
	path := profiled.path
	if profiled.n++; profiled.n > 1 {
		path = fmt.Sprintf("%s.%d", path, profiled.n)
	}
	f, err := os.Create(path)
	if err != nil {
		fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "bench: CPU profile of %s in %s\n", name, path)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// named is one workload of an alternation; with a pool, each of its
// windows is watched (conns.go).
type named struct {
	name string
	fn   op
	pool *pool
}

// alternate measures workloads that are compared with each other in turns
// — rounds windows of dur each, one workload after the other — so that
// load from elsewhere on the machine falls on all of them alike; each
// result sums its windows.
func alternate(ctx context.Context, backend string, n, rounds int, dur time.Duration, maxOps int64, wls ...named) []result {
	turns := make([]turn, len(wls))
	for i, wl := range wls {
		turns[i] = turn{wl, n}
	}
	return inTurns(ctx, backend, rounds, dur, maxOps, turns)
}

// alternateLevels is alternate for one workload at several worker counts.
func alternateLevels(ctx context.Context, wl named, backend string, levels []int, rounds int, dur time.Duration, maxOps int64) []result {
	turns := make([]turn, len(levels))
	for i, n := range levels {
		turns[i] = turn{wl, n}
	}
	return inTurns(ctx, backend, rounds, dur, maxOps, turns)
}

// turn is one workload at one worker count in an alternation.
type turn struct {
	named
	n int
}

func inTurns(ctx context.Context, backend string, rounds int, dur time.Duration, maxOps int64, turns []turn) []result {
	if !slices.ContainsFunc(turns, func(t turn) bool { return wanted(t.name) }) {
		return nil
	}
	sums := make([]report.Sample, len(turns))
	for r := 0; r < rounds; r++ {
		for i, t := range turns {
			key := fmt.Sprintf("%s/%s/%d", t.name, backend, t.n)
			stop := startProfile(key)
			var unwatch func(ops int) connShare
			if t.pool != nil {
				unwatch = t.pool.watch(ctx)
			}
			s := report.Measure(ctx, t.n, dur, maxOps, func(ctx context.Context, w, _ int) error { return t.fn(ctx, w) })
			if unwatch != nil {
				recordShare(key, unwatch(len(s.Lat)-s.Failures))
			}
			sums[i].Add(s)
			if stop != nil {
				stop()
			}
		}
	}
	out := make([]result, len(turns))
	for i, t := range turns {
		out[i] = sums[i].Summarize(t.name, backend, t.n)
	}
	return out
}

func main() {
	var (
		out            = flag.String("out", "var/bench", "folder for report.txt and the SVG charts")
		dur            = flag.Duration("dur", 1500*time.Millisecond, "duration of each concurrency level")
		maxOps         = flag.Int64("max", 200000, "operations per level at most")
		levels         = flag.String("levels", "1,4,16,64", "concurrency levels")
		budget         = flag.Duration("budget", 8*time.Minute, "stop escalating workloads after this (the 4-connection targets run regardless)")
		p99Stop        = flag.Duration("p99", 100*time.Millisecond, "stop escalating a workload once its p99 exceeds this")
		growth         = flag.Int("growth", 500_000, "spent token rows of the growth step before code-flow-grown (0: skip it)")
		catalogGrowth  = flag.Int("catalog-growth", 100_000, "businesses the search growth step adds on PostgreSQL (a fifth, at most 20,000, on SQLite; 0: skip the step)")
		bookingsGrowth = flag.Int("bookings-growth", 1_000_000, "bookings the growth step adds on PostgreSQL (a fifth on SQLite)")
		soakFor        = flag.Duration("soak", 0, "run only the rotation soak, this long (make bench-soak: 10m), and write soak.txt")
		soakWin        = flag.Duration("soak-window", 30*time.Second, "the soak's reporting window")
		soakOld        = flag.Int("soak-spent", 500_000, "spent token rows, expired an hour ago, the soak's database starts with")
	)
	flag.DurationVar(&floorCPU, "floor-cpu", 0, "CPU time each floor rotation spends between its statements, holding no connection (what the process's CPU does to the rate)")
	flag.StringVar(&profiled.path, "cpuprofile", "", "write a CPU profile (go tool pprof) of the run -profile names to this file")
	flag.StringVar(&profiled.match, "profile", "code-flow/pg-pool4/16", "the run -cpuprofile records: workload/backend/workers")
	onlyRE := flag.String("only", "", "run only the workloads this regular expression matches (the report then has only those)")
	flag.Parse()
	if *onlyRE != "" {
		re, err := regexp.Compile(*onlyRE)
		if err != nil {
			fatal(fmt.Errorf("-only: %w", err))
		}
		only = re
	}
	var lv []int
	for _, s := range strings.Split(*levels, ",") {
		var n int
		fmt.Sscan(s, &n)
		if n > 0 {
			lv = append(lv, n)
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	ctx := context.Background()
	began := time.Now()
	tmp, err := os.MkdirTemp("", "linkslot-bench.")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)

	if *soakFor > 0 {
		if err := soak(ctx, tmp, os.Getenv("LINKSLOT_TEST_POSTGRES_URL"), *out, *soakFor, *soakWin, *soakOld); err != nil {
			fatal(err)
		}
		return
	}

	var results []result
	var notes []string
	record := func(r result) {
		if r.Workload == "" {
			return // left out by -only
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%-20s %-8s %3d workers: %8.0f ops/s  p50 %7s  p99 %7s  max %7s  failures %d %s\n",
			r.Workload, r.Backend, r.Workers, r.Throughput(), ms(r.P50), ms(r.P99), ms(r.Max), r.Failures, r.FirstErr)
	}
	// escalate runs fn at each level until p99 passes the stop or the
	// budget runs out.
	escalate := func(workload, backend string, fn op) {
		if !wanted(workload) {
			return
		}
		for _, n := range lv {
			if time.Since(began) > *budget {
				notes = append(notes, fmt.Sprintf("budget reached: %s/%s stopped before %d workers", workload, backend, n))
				return
			}
			r := run(ctx, workload, backend, n, *dur, *maxOps, fn)
			record(r)
			if r.P99 > *p99Stop {
				return
			}
		}
	}

	// Baselines: a no-op HTTP handler and a no-op MCP tool on the SDK's
	// stateless handler, in this process, on the same kind of listener.
	noop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }))
	defer noop.Close()
	hc := &http.Client{Transport: benchTransport, Timeout: 30 * time.Second}
	escalate("noop-http", "none", func(ctx context.Context, w int) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, noop.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		readAll(resp)
		return nil
	})
	noopTool := noopToolServer()
	defer noopTool.Close()
	escalate("noop-tool", "none", func(ctx context.Context, w int) error {
		return toolCheck(ctx, hc, noopTool.URL, "", "noop", map[string]any{})
	})

	backends := []string{"sqlite"}
	pgURL := os.Getenv("LINKSLOT_TEST_POSTGRES_URL")
	if pgURL != "" {
		backends = append(backends, "postgres")
	} else {
		notes = append(notes, "PostgreSQL skipped: LINKSLOT_TEST_POSTGRES_URL is not set (run through scripts/with-postgres)")
	}
	maxW := lv[len(lv)-1]
	for _, backend := range backends {
		sys, err := newSystem(ctx, backend, tmp, pgURL, 0, maxW)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", backend, err))
		}
		people, err := signInAll(ctx, sys, maxW)
		if err != nil {
			sys.Close()
			fatal(fmt.Errorf("%s: sign-in: %w", backend, err))
		}
		escalate("jwks", backend, func(ctx context.Context, w int) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sys.as.URL+"/jwks.json", nil)
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			readAll(resp)
			if resp.StatusCode != 200 {
				return fmt.Errorf("jwks answered %d", resp.StatusCode)
			}
			return nil
		})
		escalate("refresh", backend, func(ctx context.Context, w int) error { return people[w].rotate(ctx) })
		if backend == "postgres" {
			floors(ctx, sys, people, backend, 16, *dur, *maxOps, record)
		}
		escalate("code-flow", backend, func(ctx context.Context, w int) error { return people[w].codeFlow(ctx) })
		if backend == "postgres" && len(people) >= 16 && *growth > 0 && wanted("code-flow-grown") {
			// The growth step: half a million spent token rows that
			// nothing has analyzed yet, on a second system of its own
			// database, and the code flow on both, at 16 workers, in
			// alternating windows, so that neither figure is taken at a
			// different moment of the machine's load. (The rows used to
			// go into the main database, after a fresh window there. Its
			// grown window fell to 19–27 flows/s twice in a dozen runs:
			// once autovacuum had analyzed that database, the code
			// exchange found a code's PKCE and OpenID sessions by kind and
			// read all the spent ones, which migration 00017 and
			// sqlstore.PrefetchStatement's keys ended.) Both databases
			// are settled first (CHECKPOINT, sync) and warmed up by an
			// unrecorded window each, so that neither measures the writes
			// the step left behind: a table gathers those rows over hours.
			grown, err := newSystem(ctx, backend, tmp, pgURL, 0, 16)
			if err != nil {
				fatal(fmt.Errorf("growth step: %w", err))
			}
			grownPeople, err := signInAll(ctx, grown, 16)
			if err != nil {
				grown.Close()
				fatal(fmt.Errorf("growth step: sign-in: %w", err))
			}
			t0 := time.Now()
			if err := testkit.FillSpentTokens(grown.store.DB(), *growth, demo.ClientID, grown.accounts[0].ID); err != nil {
				grown.Close()
				fatal(fmt.Errorf("growth step: %w", err))
			}
			growthRows = *growth
			notes = append(notes, fmt.Sprintf("growth step: %d spent token rows, not analyzed, in %s", growthRows, time.Since(t0).Round(time.Millisecond)))
			settle(sys)
			flows := []named{
				{"code-flow-fresh", func(ctx context.Context, w int) error { return people[w].codeFlow(ctx) }, nil},
				{"code-flow-grown", func(ctx context.Context, w int) error { return grownPeople[w].codeFlow(ctx) }, nil},
			}
			for _, wl := range flows { // warm-up, not recorded
				run(ctx, wl.name, backend, 16, *dur, *maxOps, wl.fn)
			}
			for _, r := range alternate(ctx, backend, 16, 3, *dur, *maxOps, flows...) {
				record(r)
			}
			grown.Close()
		}
		day := booking.DemoBarberDay(time.Now(), 3) // a day both haircut barbers work, whatever today is
		avArgs := map[string]any{"business_reference": "biz-brightcut-barbers", "service_reference": "svc-classic-haircut", "local_date": day}
		escalate("availability-auth", backend, func(ctx context.Context, w int) error {
			return toolCheck(ctx, people[w].api, sys.resource, people[w].access, "check_business_availability", avArgs)
		})
		escalate("availability-noauth", backend, func(ctx context.Context, w int) error {
			return toolCheck(ctx, people[w].api, sys.rsOpen.URL+"/mcp", people[w].access, "check_business_availability", avArgs)
		})
		// The domain's cost: the authenticated call against the same call
		// on the same server with the booking engine replaced by a no-op
		// (the performance target's baseline), and against a bare SDK
		// server's no-op tool, in alternating windows.
		for _, r := range alternate(ctx, backend, 16, 3, *dur, *maxOps,
			named{"availability-vs-noop", func(ctx context.Context, w int) error {
				return toolCheck(ctx, people[w].api, sys.resource, people[w].access, "check_business_availability", avArgs)
			}, nil},
			named{"noop-domain-vs", func(ctx context.Context, w int) error {
				return toolCheck(ctx, people[w].api, sys.rsNoop.URL+"/mcp", people[w].access, "check_business_availability", avArgs)
			}, nil},
			named{"noop-tool-vs", func(ctx context.Context, w int) error {
				return toolCheck(ctx, hc, noopTool.URL, "", "noop", map[string]any{})
			}, nil}) {
			record(r)
		}
		if backend == "postgres" {
			// The cost of limits shared by every replica: the same tool
			// call with the limits in process and in the database, each
			// worker a client of its own behind a trusted proxy; then every
			// worker from one address (one hot row).
			local, shared, err := sys.limitServers(ctx)
			if err != nil {
				fatal(err)
			}
			for _, wl := range []struct {
				name, url string
				oneAddr   bool
			}{
				{"limits-local", local.URL, false}, {"limits-shared", shared.URL, false}, {"limits-shared-1addr", shared.URL, true},
			} {
				record(run(ctx, wl.name, backend, 16, *dur, *maxOps, func(ctx context.Context, w int) error {
					addr := fmt.Sprintf("198.51.100.%d", w+1)
					if wl.oneAddr {
						addr = "198.51.100.200"
					}
					_, err := toolCallFrom(ctx, people[w].api, wl.url+"/mcp", people[w].access, "check_business_availability", avArgs, addr)
					return err
				}))
			}
		}
		if hasTool(ctx, hc, sys.resource, people[0].access, "create_my_booking") {
			cc := newCreateCancel(sys, people)
			escalate("create-cancel", backend, cc.op)
		} else {
			notes = append(notes, fmt.Sprintf("create-cancel skipped on %s: the resource server does not serve create_my_booking yet", backend))
		}
		sys.Close()
	}
	// 64 workers on a 4-connection pool.
	if pgURL != "" {
		sys, err := newSystem(ctx, "postgres", tmp, pgURL, 4, maxW)
		if err != nil {
			fatal(err)
		}
		people, err := signInAll(ctx, sys, maxW)
		if err != nil {
			fatal(err)
		}
		// The setting: 16 workers on 4 connections, the floor on
		// the same pool, then 64 workers. The 16- and 64-worker windows
		// alternate (the 64/16 ratio is a target), after a checkpoint that
		// writes out what the earlier systems and the growth step left
		// dirty, so that neither level pays for it alone; four windows each,
		// since a load spike from elsewhere on a shared machine that falls
		// on one of two windows moved the ratio by a fifth.
		settle(sys)
		pool4 := []int{16}
		if maxW != 16 {
			pool4 = append(pool4, maxW)
		}
		own := sys.pool()
		for _, wl := range []named{
			{"refresh", func(ctx context.Context, w int) error { return people[w].rotate(ctx) }, own},
			{"code-flow", func(ctx context.Context, w int) error { return people[w].codeFlow(ctx) }, own},
		} {
			for _, r := range alternateLevels(ctx, wl, "pg-pool4", pool4, 4, *dur, *maxOps) {
				record(r)
			}
		}
		floors(ctx, sys, people, "pg-pool4", 16, *dur, *maxOps, record)
		codeFloors(ctx, sys, people, "pg-pool4", 16, *dur, *maxOps, record)
		sys.Close()
	}
	// The search and bookings growth step (bench/growth.go), on a database
	// of its own per backend.
	for _, backend := range backends {
		if *catalogGrowth <= 0 || !wanted("search-growth") {
			break
		}
		nb, nk := *catalogGrowth, *bookingsGrowth
		if backend == "sqlite" {
			nb, nk = min(nb/5, 20_000), nk/5
		}
		lines, err := growthStep(ctx, backend, tmp, pgURL, nb, nk, 2*time.Second)
		if err != nil {
			fatal(fmt.Errorf("search growth step, %s: %w", backend, err))
		}
		for _, l := range lines {
			fmt.Fprintln(os.Stderr, l)
		}
		notes = append(notes, lines...)
	}
	if err := writeReport(*out, results, notes, time.Since(began)); err != nil {
		fatal(err)
	}
	if err := writeCharts(*out, results); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "bench: report in %s, %s\n", filepath.Join(*out, "report.txt"), time.Since(began).Round(time.Second))
}

// settle makes PostgreSQL write out every dirty buffer (CHECKPOINT) and the
// machine every dirty page (sync), so that the window after it does not pay
// for the writes of what came before.
func settle(sys *system) {
	if err := sys.store.DB().Exec("CHECKPOINT").Error; err != nil {
		fatal(fmt.Errorf("checkpoint: %w", err))
	}
	syscall.Sync()
}

// floors measures the refresh rotation against its floor (floor.go) at n
// workers on sys's database and pool size, in alternating windows: the
// product's rotation (refresh-vs-floor), the floor with the access-token
// row as the product stores it (refresh-floor), without
// (refresh-floor-no-access-row), with the two statements in one
// transaction, the performance issue's definition (refresh-floor-in-tx),
// and served over HTTP to the same load generator as the product
// (refresh-floor-http).
func floors(ctx context.Context, sys *system, people []*person, backend string, n int, dur time.Duration, maxOps int64, record func(result)) {
	if !wanted("refresh-vs-floor") && !wanted("refresh-floor") {
		return
	}
	wls := []named{{"refresh-vs-floor", func(ctx context.Context, w int) error { return people[w].rotate(ctx) }, sys.pool()}}
	for _, o := range []struct {
		name                  string
		accessRow, inTx, http bool
	}{{"refresh-floor", true, false, false}, {"refresh-floor-no-access-row", false, false, false},
		{"refresh-floor-in-tx", true, true, false}, {"refresh-floor-http", true, false, true}} {
		app := "bench-" + o.name
		f, err := newFloor(ctx, withAppName(sys.dsn, app), sys.store.PoolSize(), n, o.accessRow, o.inTx)
		if err != nil {
			fatal(fmt.Errorf("floor: %w", err))
		}
		defer f.Close()
		rotate := f.rotate
		if o.http {
			// Served over HTTP to the product's own load generator.
			srv := httptest.NewServer(f)
			defer srv.Close()
			clients := make([]*person, n)
			for w := range clients {
				clients[w] = &person{api: &http.Client{Transport: benchTransport, Timeout: 30 * time.Second}, refresh: f.chains[w],
					oauth: &oauth2.Config{ClientID: demo.ClientID, Endpoint: oauth2.Endpoint{TokenURL: srv.URL, AuthStyle: oauth2.AuthStyleInParams}}}
			}
			rotate = func(ctx context.Context, w int) error { return clients[w].rotate(ctx) }
		}
		wls = append(wls, named{o.name, rotate, &pool{w: sys.watcher(), db: f.db, app: app}})
	}
	for _, r := range alternate(ctx, backend, n, 3, dur, maxOps, wls...) {
		record(r)
	}
}

// codeFloors measures the signed-in code flow against its floor
// (codefloor.go) at n workers on sys's database and pool size, in
// alternating windows: the product's flow (code-flow-vs-floor) and the
// floor (code-flow-floor), on a store of its own of the same pool size.
func codeFloors(ctx context.Context, sys *system, people []*person, backend string, n int, dur time.Duration, maxOps int64, record func(result)) {
	if !wanted("code-flow-vs-floor") && !wanted("code-flow-floor") {
		return
	}
	const app = "bench-code-flow-floor"
	f, err := newCodeFloor(ctx, withAppName(sys.dsn, app), sys.store.PoolSize())
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	for _, r := range alternate(ctx, backend, n, 3, dur, maxOps,
		named{"code-flow-vs-floor", func(ctx context.Context, w int) error { return people[w].codeFlow(ctx) }, sys.pool()},
		named{"code-flow-floor", f.flow, &pool{w: sys.watcher(), db: f.st.SQL(), app: app}}) {
		record(r)
	}
}

func signInAll(ctx context.Context, sys *system, n int) ([]*person, error) {
	people := make([]*person, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			people[i], errs[i] = sys.signIn(ctx, sys.accounts[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return people, nil
}

// noopToolServer serves one tool that does nothing, through the same SDK
// handler options the resource server uses.
func noopToolServer() *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "noop", Version: "1"}, nil)
	type in struct{}
	type out struct {
		OK bool `json:"ok"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "noop", Description: "does nothing"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, out, error) {
		return nil, out{OK: true}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	return httptest.NewServer(h)
}

func hasTool(ctx context.Context, hc *http.Client, endpoint, token, name string) bool {
	_, err := toolCall(ctx, hc, endpoint, token, name, map[string]any{})
	return err == nil || !strings.Contains(err.Error(), "protocol error")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
