package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkslot/linkslot/bench/report"
)

// writeReport writes report.txt (and prints it): the shared table of
// bench/report, then this driver's own sections — the ratios against the
// baselines and the contract's targets.
func writeReport(dir string, rs []result, notes []string, took time.Duration) error {
	var b strings.Builder
	report.WriteHeader(&b, "Linkslot load report", took)
	fmt.Fprintf(&b, "Command: make bench (scripts/bench → scripts/with-postgres go run ./bench). Load generator in the same process.\n\n")
	report.WriteTable(&b, rs)

	find := func(w, be string, n int) (result, bool) { return report.Find(rs, w, be, n) }
	fmt.Fprintf(&b, "\nRatios (same run, same worker count):\n")
	for _, be := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 4, 16, 64} {
			a, ok1 := find("availability-auth", be, n)
			o, ok2 := find("availability-noauth", be, n)
			nt, ok3 := find("noop-tool", "none", n)
			nh, ok4 := find("noop-http", "none", n)
			if ok1 && ok2 {
				fmt.Fprintf(&b, "  %-8s %2d: availability auth/no-auth = %.2f (target ≥ 0.70)", be, n, a.Throughput()/o.Throughput())
				if ok3 {
					fmt.Fprintf(&b, "; availability-auth/no-op tool = %.2f", a.Throughput()/nt.Throughput())
				}
				if ok4 {
					fmt.Fprintf(&b, "; no-op tool/no-op HTTP = %.2f", nt.Throughput()/nh.Throughput())
				}
				fmt.Fprintln(&b)
			}
		}
	}
	fmt.Fprintf(&b, "\nAuthenticated check_business_availability against a no-op tool (16 clients, alternating windows): the same call on the\n"+
		"same server with the booking engine replaced by a no-op (testkit.NoopDomain; the target's baseline), and a bare SDK server's no-op tool:\n")
	for _, be := range []string{"sqlite", "postgres"} {
		a, ok := find("availability-vs-noop", be, 16)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %-8s availability %.0f/s p99 %.1f ms", be, a.Throughput(), msf(a.P99))
		if nd, ok := find("noop-domain-vs", be, 16); ok {
			fmt.Fprintf(&b, "; no-op tool, same server %.0f/s p99 %.1f ms: availability/no-op = %.2f (target ≥ 0.40)",
				nd.Throughput(), msf(nd.P99), a.Throughput()/nd.Throughput())
		}
		if nt, ok := find("noop-tool-vs", be, 16); ok {
			fmt.Fprintf(&b, "; bare SDK no-op %.0f/s: availability/bare = %.2f", nt.Throughput(), a.Throughput()/nt.Throughput())
		}
		fmt.Fprintln(&b)
	}
	if l, ok := find("limits-local", "postgres", 16); ok {
		fmt.Fprintf(&b, "\nRate limits shared by the replicas (PostgreSQL, check_business_availability, 16 workers):\n")
		fmt.Fprintf(&b, "  in process: %.0f calls/s, p99 %.1f ms\n", l.Throughput(), msf(l.P99))
		if s, ok := find("limits-shared", "postgres", 16); ok {
			fmt.Fprintf(&b, "  shared, 16 client addresses: %.0f calls/s, p99 %.1f ms; shared/in process = %.2f\n", s.Throughput(), msf(s.P99), s.Throughput()/l.Throughput())
		}
		if s, ok := find("limits-shared-1addr", "postgres", 16); ok {
			fmt.Fprintf(&b, "  shared, one client address: %.0f calls/s, p99 %.1f ms; shared/in process = %.2f\n", s.Throughput(), msf(s.P99), s.Throughput()/l.Throughput())
		}
	}
	fmt.Fprintf(&b, "\nContract §9 targets at 16 workers:\n")
	for _, be := range []string{"sqlite", "postgres"} {
		if r, ok := find("refresh", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s refresh rotation: %.0f/s (target ≥ 1000), p99 %.1f ms (≤ 60), failures %d (0)\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
		if r, ok := find("code-flow", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s code flow: %.0f/s (target ≥ 500), p99 %.1f ms (≤ 100), failures %d\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
	}
	if g, ok := find("code-flow-grown", "postgres", 16); ok {
		if f, ok := find("code-flow-fresh", "postgres", 16); ok {
			fmt.Fprintf(&b, "  postgres code flow after the growth step (%d spent rows, not analyzed): %.0f/s, p99 %.1f ms; grown/fresh = %.2f (target ≥ 0.90)\n",
				growthRows, g.Throughput(), msf(g.P99), g.Throughput()/f.Throughput())
		}
	}
	for _, w := range []string{"refresh", "code-flow"} {
		if r, ok := find(w, "pg-pool4", 64); ok {
			fmt.Fprintf(&b, "  64 workers, 4 connections, %s: %d ops, %.0f/s, p99 %.1f ms, max %.1f ms, failures %d (target: completes, 0 failures, no stall)\n",
				w, r.Ops, r.Throughput(), msf(r.P99), msf(r.Max), r.Failures)
		}
	}
	fmt.Fprintf(&b, "\nRefresh rotation against its floor (16 workers; the floor sends the product's own two statements bare, plus one ES256 signature; the product also signs the refresh's ID token: bench/floor.go):\n")
	for _, be := range []string{"postgres", "pg-pool4"} {
		r, ok1 := find("refresh-vs-floor", be, 16)
		f, ok2 := find("refresh-floor", be, 16)
		if !ok1 || !ok2 {
			continue
		}
		fmt.Fprintf(&b, "  %-8s (pool %s): refresh %.0f/s p99 %.1f ms failures %d; floor %.0f/s p99 %.1f ms; refresh/floor = %.2f (target ≥ 0.80, p99 ≤ 20 ms, 0 failures)\n",
			be, poolOf(be), r.Throughput(), msf(r.P99), r.Failures, f.Throughput(), msf(f.P99), r.Throughput()/f.Throughput())
		if x, ok := find("refresh-floor-in-tx", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s floor with the two statements in one transaction (the issue's definition of the floor): %.0f/s p99 %.1f ms; refresh/that floor = %.2f\n",
				be, x.Throughput(), msf(x.P99), r.Throughput()/x.Throughput())
		}
		if n, ok := find("refresh-floor-no-access-row", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s floor without the access-token row: %.0f/s; without/with = %.2f (the most that keeping no row per JWT access token could gain)\n",
				be, n.Throughput(), n.Throughput()/f.Throughput())
		}
		if h, ok := find("refresh-floor-http", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s floor served over HTTP to the same load generator: %.0f/s p99 %.1f ms; that floor/floor = %.2f (what HTTP alone costs), refresh/that floor = %.2f\n",
				be, h.Throughput(), msf(h.P99), h.Throughput()/f.Throughput(), r.Throughput()/h.Throughput())
		}
	}
	if len(connShares) > 0 {
		fmt.Fprintf(&b, "\nWhere each pool's connections spend the windows above (bench/conns.go): the process's CPU per operation (server and load\n"+
			"generator), then, sampled every %s and averaged in connections, database/sql's connections open and handed out and what\n"+
			"pg_stat_activity shows the pool's PostgreSQL backends doing:\n", connWatchEvery)
		for _, c := range connShares {
			fmt.Fprintf(&b, "  %-40s %s\n", c.key, c.connShare)
		}
	}
	if f16, ok := find("code-flow", "pg-pool4", 16); ok {
		fmt.Fprintf(&b, "\nSigned-in code flow on 4 connections:\n  16 workers: %.0f flows/s, p99 %.1f ms, failures %d (target ≥ 1000/s, p99 ≤ 40 ms)\n", f16.Throughput(), msf(f16.P99), f16.Failures)
		if f64, ok := find("code-flow", "pg-pool4", 64); ok {
			fmt.Fprintf(&b, "  64 workers: %.0f flows/s, p99 %.1f ms, failures %d; 64/16 = %.2f (target ≥ 0.90)\n", f64.Throughput(), msf(f64.P99), f64.Failures, f64.Throughput()/f16.Throughput())
		}
	}
	if r, ok := find("code-flow-vs-floor", "pg-pool4", 16); ok {
		if f, ok := find("code-flow-floor", "pg-pool4", 16); ok {
			fmt.Fprintf(&b, "\nSigned-in code flow against its floor (16 workers, 4 connections, alternating windows; the floor makes the product's own five\n"+
				"storage calls through its store, plus the PKCE check and the two ES256 signatures, in a bare loop: bench/codefloor.go):\n")
			fmt.Fprintf(&b, "  code flow %.0f/s p99 %.1f ms failures %d; floor %.0f/s p99 %.1f ms; code flow/floor = %.2f\n",
				r.Throughput(), msf(r.P99), r.Failures, f.Throughput(), msf(f.P99), r.Throughput()/f.Throughput())
		}
	}
	writeBounds(&b, find)
	if errs := report.FailureLines(rs); len(errs) > 0 {
		fmt.Fprintf(&b, "\nFailures:\n%s\n", strings.Join(errs, "\n"))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\nNotes:\n  %s\n", strings.Join(notes, "\n  "))
	}
	fmt.Fprintf(&b, "\nCharts: %s/<workload>.svg (throughput and p99 against workers, one line per backend).\n", dir)
	os.Stdout.WriteString(b.String())
	return os.WriteFile(filepath.Join(dir, "report.txt"), []byte(b.String()), 0o644)
}

func msf(d time.Duration) float64 { return report.Ms(d) }

func poolOf(backend string) string {
	if backend == "pg-pool4" {
		return "4"
	}
	return "16"
}

// writeCharts writes dir/<workload>.svg for every workload.
func writeCharts(dir string, rs []result) error { return report.WriteCharts(dir, "", rs) }

// writeBounds sets the three targets on 4 connections that ask for an
// absolute rate, a ratio to a bare floor or a tail beside what the bare
// programs of the same run reach on this machine: the floor served by a
// bare net/http handler (what HTTP alone costs it), the floor's own p99,
// and the code flow's floor. A target that its own bare program misses in
// a run asks the product, in that run, to do better than the bare program
// of its own statements.
func writeBounds(b *strings.Builder, find func(w, be string, n int) (result, bool)) {
	f, okF := find("refresh-floor", "pg-pool4", 16)
	h, okH := find("refresh-floor-http", "pg-pool4", 16)
	c, okC := find("code-flow-floor", "pg-pool4", 16)
	if !okF && !okC {
		return
	}
	fmt.Fprintf(b, "\nWhat the bare programs of this run reach on 4 connections, 16 workers, beside the targets that ask for an absolute rate,\n"+
		"a ratio to a bare floor or a tail (where the bare program misses a target, the target asked the product to beat it):\n")
	if okF && okH {
		fmt.Fprintf(b, "  refresh/floor ≥ 0.80: the floor behind a bare net/http handler reached %.2f of the floor\n", h.Throughput()/f.Throughput())
	}
	if okF {
		fmt.Fprintf(b, "  refresh p99 ≤ 20 ms: the floor's own p99 was %.1f ms\n", msf(f.P99))
	}
	if okC {
		fmt.Fprintf(b, "  code flow ≥ 1000 flows/s, p99 ≤ 40 ms: its floor (no HTTP, no fosite) ran %.0f flows/s, p99 %.1f ms\n", c.Throughput(), msf(c.P99))
	}
}
