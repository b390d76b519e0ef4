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
// baselines and the targets of docs/reference.md §9.
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
	fmt.Fprintf(&b, "\nThe default pool (16 connections) at 16 workers:\n")
	for _, be := range []string{"sqlite", "postgres"} {
		if r, ok := find("refresh", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s refresh rotation: %.0f/s, p99 %.1f ms, failures %d\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
		if r, ok := find("code-flow", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s code flow: %.0f/s, p99 %.1f ms, failures %d\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
	}
	for _, w := range []string{"refresh", "code-flow"} {
		if r, ok := find(w, "pg-pool4", 64); ok {
			fmt.Fprintf(&b, "  64 workers, 4 connections, %s: %d ops, %.0f/s, p99 %.1f ms, max %.1f ms, failures %d\n",
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
		fmt.Fprintf(&b, "  %-8s (pool %s): refresh %.0f/s p99 %.1f ms failures %d; floor %.0f/s p99 %.1f ms; refresh/floor = %.2f\n",
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
		fmt.Fprintf(&b, "\nSigned-in code flow on 4 connections:\n  16 workers: %.0f flows/s, p99 %.1f ms, failures %d\n", f16.Throughput(), msf(f16.P99), f16.Failures)
		if f64, ok := find("code-flow", "pg-pool4", 64); ok {
			fmt.Fprintf(&b, "  64 workers: %.0f flows/s, p99 %.1f ms, failures %d; 64/16 = %.2f\n", f64.Throughput(), msf(f64.P99), f64.Failures, f64.Throughput()/f16.Throughput())
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
	writeTargets(&b, find)
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

// writeTargets judges the performance targets of docs/reference.md §9,
// every one a ratio of two figures measured in alternating windows of this
// run (absolute rates on a shared machine move by half within an hour, so
// none is judged): the refresh rotation against its floor behind a bare
// HTTP handler and the code flow against its floor, both on 4 connections
// at 16 workers, with their tails against the floors' tails; 64 workers
// and the grown database against the 16-worker fresh figure; and the
// authenticated availability call against the same call with the booking
// engine replaced by a no-op. A target whose figures this run did not
// measure (a -only or -growth 0 run) is left out. The sign-in burst is
// judged in its own section; the statement count of an availability answer
// and the overlap constraint's insert ratio are held by tests
// (TestAvailabilityStatements in internal/booking, BenchmarkBookingInsert in
// internal/store/sqlstore).
func writeTargets(b *strings.Builder, find func(w, be string, n int) (result, bool)) {
	var lines []string
	judge := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	ratio := func(got, want float64, atLeast bool) string {
		ok := got >= want
		cmp := "≥"
		if !atLeast {
			ok, cmp = got <= want, "≤"
		}
		return fmt.Sprintf("%.2f (%s %.2f: %s)", got, cmp, want, judge(ok))
	}
	if r, ok := find("refresh-vs-floor", "pg-pool4", 16); ok {
		if h, ok := find("refresh-floor-http", "pg-pool4", 16); ok {
			lines = append(lines, fmt.Sprintf("refresh rotation, 4 connections, 16 workers: %.0f/s ÷ its floor behind a bare HTTP handler %.0f/s = %s; p99 %.1f ms ÷ the floor's %.1f ms = %s; failures %d (0: %s)",
				r.Throughput(), h.Throughput(), ratio(r.Throughput()/h.Throughput(), 0.8, true),
				msf(r.P99), msf(h.P99), ratio(msf(r.P99)/msf(h.P99), 1.5, false), r.Failures, judge(r.Failures == 0)))
		}
	}
	if r, ok := find("code-flow-vs-floor", "pg-pool4", 16); ok {
		if f, ok := find("code-flow-floor", "pg-pool4", 16); ok {
			lines = append(lines, fmt.Sprintf("signed-in code flow, 4 connections, 16 workers: %.0f/s ÷ its floor %.0f/s = %s; p99 %.1f ms ÷ the floor's %.1f ms = %s; failures %d (0: %s)",
				r.Throughput(), f.Throughput(), ratio(r.Throughput()/f.Throughput(), 0.8, true),
				msf(r.P99), msf(f.P99), ratio(msf(r.P99)/msf(f.P99), 1.5, false), r.Failures, judge(r.Failures == 0)))
		}
	}
	for _, w := range []string{"refresh", "code-flow"} {
		r16, ok1 := find(w, "pg-pool4", 16)
		r64, ok2 := find(w, "pg-pool4", 64)
		if ok1 && ok2 {
			lines = append(lines, fmt.Sprintf("%s at 64 workers ÷ 16 workers (4 connections): %s", w, ratio(r64.Throughput()/r16.Throughput(), 0.9, true)))
		}
	}
	if g, ok := find("code-flow-grown", "postgres", 16); ok {
		if f, ok := find("code-flow-fresh", "postgres", 16); ok {
			lines = append(lines, fmt.Sprintf("code flow after %d spent rows ÷ fresh: %s", growthRows, ratio(g.Throughput()/f.Throughput(), 0.9, true)))
		}
	}
	for _, be := range []string{"sqlite", "postgres"} {
		a, ok1 := find("availability-vs-noop", be, 16)
		nd, ok2 := find("noop-domain-vs", be, 16)
		if ok1 && ok2 {
			lines = append(lines, fmt.Sprintf("authenticated check_business_availability ÷ the no-op booking engine, %s, 16 clients: %s", be, ratio(a.Throughput()/nd.Throughput(), 0.4, true)))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\nTargets (docs/reference.md §9; ratios of figures measured in alternating windows of this run):\n")
	for _, l := range lines {
		fmt.Fprintf(b, "  %s\n", l)
	}
}
