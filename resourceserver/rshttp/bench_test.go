package rshttp_test

import (
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// BenchmarkCheckBusinessAvailability measures check_business_availability
// (a service and a local date: the slot engine on the demo data)
// with 16 concurrent clients over HTTP keep-alive, on every backend, in
// three setups:
//
//	auth      the production path: bearer verification + the real engine
//	noauth    bearer verification replaced by one that accepts any token (anyToken)
//	noop-tool authentication on, the engine replaced by a no-op
//
// It reports calls/s and the p99 latency; auth/noauth is the cost of
// authentication, auth/noop-tool the cost of the domain.
//
//	go test ./resourceserver/rshttp -run '^$' -bench CheckBusinessAvailability -benchtime 3s
var benchSetups = []struct {
	name string
	o    envOpts
}{
	{"auth", envOpts{noLimits: true}},
	{"noauth", envOpts{noLimits: true, authDisabled: true}},
	{"noop-tool", envOpts{noLimits: true, domain: testkit.NoopDomain{}}},
}

// benchCaller builds one server of a setup and returns a function making
// one authenticated check_business_availability call, caches warm.
func benchCaller(b *testing.B, o envOpts) func() error {
	e := newEnv(b, o)
	if len(booking.DemoCatalogs(e.clock.Now())) == 0 {
		b.Skip("internal/booking has no demo catalogs yet")
	}
	tok := "unverified"
	if !o.authDisabled {
		tok = e.token(func(tc *tokenClaims) { tc.Exp = e.clock.Now().Add(24 * time.Hour).Unix() })
	}
	body := toolCall("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers",
		"service_reference": "svc-classic-haircut", "local_date": "2026-03-04"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	call := func() error {
		req, _ := http.NewRequest(http.MethodPost, e.resource, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), `"isError":true`) {
			return &callError{resp.StatusCode, string(b)}
		}
		return nil
	}
	if err := call(); err != nil { // warm caches: JWKS, link, catalog
		b.Fatal(err)
	}
	return call
}

// load runs call from 16 goroutines for d and returns the calls made and
// their latencies, sorted.
func load(call func() error, d time.Duration) ([]time.Duration, error) {
	var (
		mu    sync.Mutex
		lats  []time.Duration
		first error
		wg    sync.WaitGroup
	)
	stop := time.Now().Add(d)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := call(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lats)
	return lats, first
}

func p99(lats []time.Duration) time.Duration {
	if len(lats) == 0 {
		return 0
	}
	return lats[(len(lats)*99)/100]
}

// BenchmarkAuthCostRatio measures the three setups of
// BenchmarkCheckBusinessAvailability interleaved — rounds of 2 s each, in
// turn — so that load from elsewhere on the machine hits all three alike,
// and reports calls/s and p99 of each and the ratios docs/reference.md §9 names
// (auth/noauth ≥ 0.7).
//
//	go test ./resourceserver/rshttp -run '^$' -bench AuthCostRatio -benchtime 1x
func BenchmarkAuthCostRatio(b *testing.B) {
	calls := make([]func() error, len(benchSetups))
	for i, s := range benchSetups {
		calls[i] = benchCaller(b, s.o)
	}
	const rounds, each = 5, 2 * time.Second
	all := make([][]time.Duration, len(benchSetups))
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for i := range benchSetups {
			lats, err := load(calls[i], each)
			if err != nil {
				b.Fatal(err)
			}
			all[i] = append(all[i], lats...)
		}
	}
	b.StopTimer()
	rate := make([]float64, len(all))
	for i, lats := range all {
		slices.Sort(lats)
		rate[i] = float64(len(lats)) / (rounds * each).Seconds()
		b.ReportMetric(rate[i], benchSetups[i].name+"-calls/s")
		b.ReportMetric(float64(p99(lats).Microseconds())/1000, benchSetups[i].name+"-p99-ms")
	}
	b.ReportMetric(rate[0]/rate[1], "auth/noauth")
	b.ReportMetric(rate[0]/rate[2], "auth/noop-tool")
}

func BenchmarkCheckBusinessAvailability(b *testing.B) {
	for _, be := range sqltest.Backends() {
		for _, c := range benchSetups {
			b.Run(be.Name+"/"+c.name, func(b *testing.B) {
				o := c.o
				o.store = be.Open(b)
				benchAvailability(b, benchCaller(b, o))
			})
		}
	}
}

// benchAvailability runs call from 16 clients for b.N calls and reports
// calls/s and p99.
func benchAvailability(b *testing.B, call func() error) {
	var (
		mu   sync.Mutex
		lats []time.Duration
	)
	b.SetParallelism(16 / max(1, runtimeProcs()))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			t0 := time.Now()
			if err := call(); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lats = append(lats, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lats) == 0 {
		return
	}
	slices.Sort(lats)
	p99 := lats[(len(lats)*99)/100]
	b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

type callError struct {
	status int
	body   string
}

func (c *callError) Error() string { return http.StatusText(c.status) + ": " + c.body }

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
