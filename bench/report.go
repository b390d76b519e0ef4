package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func writeReport(dir string, rs []result, notes []string, took time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Linkslot load report — %s, %s/%s, %d CPUs, GOMAXPROCS %d, took %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), took.Round(time.Second))
	fmt.Fprintf(&b, "Command: make bench (scripts/bench → scripts/with-postgres go run ./bench). Load generator in the same process.\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbackend\tworkers\tops\tops/s\tp50 ms\tp99 ms\tmax ms\tfailures\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t\n", r.Workload, r.Backend, r.Workers, r.Ops, r.Throughput(),
			msf(r.P50), msf(r.P99), msf(r.Max), r.Failures)
	}
	tw.Flush()

	find := func(w, be string, n int) (result, bool) {
		for _, r := range rs {
			if r.Workload == w && r.Backend == be && r.Workers == n {
				return r, true
			}
		}
		return result{}, false
	}
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
	fmt.Fprintf(&b, "\nContract §9 targets at 16 workers:\n")
	for _, be := range []string{"sqlite", "postgres"} {
		if r, ok := find("refresh", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s refresh rotation: %.0f/s (target ≥ 1000), p99 %.1f ms (≤ 60), failures %d (0)\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
		if r, ok := find("code-flow", be, 16); ok {
			fmt.Fprintf(&b, "  %-8s code flow: %.0f/s (target ≥ 500), p99 %.1f ms (≤ 100), failures %d\n", be, r.Throughput(), msf(r.P99), r.Failures)
		}
	}
	for _, w := range []string{"refresh", "code-flow"} {
		if r, ok := find(w, "pg-pool4", 64); ok {
			fmt.Fprintf(&b, "  64 workers, 4 connections, %s: %d ops, %.0f/s, p99 %.1f ms, max %.1f ms, failures %d (target: completes, 0 failures, no stall)\n",
				w, r.Ops, r.Throughput(), msf(r.P99), msf(r.Max), r.Failures)
		}
	}
	var errs []string
	for _, r := range rs {
		if r.FirstErr != "" {
			errs = append(errs, fmt.Sprintf("  %s/%s/%d: %d failures, first: %s", r.Workload, r.Backend, r.Workers, r.Failures, r.FirstErr))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(&b, "\nFailures:\n%s\n", strings.Join(errs, "\n"))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\nNotes:\n  %s\n", strings.Join(notes, "\n  "))
	}
	fmt.Fprintf(&b, "\nCharts: %s/<workload>.svg (throughput and p99 against workers, one line per backend).\n", dir)
	os.Stdout.WriteString(b.String())
	return os.WriteFile(filepath.Join(dir, "report.txt"), []byte(b.String()), 0o644)
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// writeCharts writes one SVG per workload: throughput (left) and p99
// (right) against workers on a log2 axis, one line per backend.
func writeCharts(dir string, rs []result) error {
	by := map[string]map[string][]result{}
	for _, r := range rs {
		if by[r.Workload] == nil {
			by[r.Workload] = map[string][]result{}
		}
		by[r.Workload][r.Backend] = append(by[r.Workload][r.Backend], r)
	}
	for wl, series := range by {
		svg := chart(wl, series)
		if err := os.WriteFile(filepath.Join(dir, wl+".svg"), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var colors = map[string]string{"sqlite": "#1f77b4", "postgres": "#d62728", "pg-pool4": "#9467bd", "none": "#2ca02c"}

func chart(title string, series map[string][]result) string {
	const W, H, pw, ph, left, top = 920, 380, 360, 260, 70, 50
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	var names []string
	for n := range series {
		names = append(names, n)
	}
	sort.Strings(names)
	maxW := 1
	for _, s := range series {
		for _, r := range s {
			maxW = max(maxW, r.Workers)
		}
	}
	xmax := math.Log2(float64(maxW))
	if xmax == 0 {
		xmax = 1
	}
	panels := []struct {
		label string
		val   func(result) float64
	}{
		{"throughput (ops/s)", func(r result) float64 { return r.Throughput() }},
		{"p99 latency (ms)", func(r result) float64 { return msf(r.P99) }},
	}
	for pi, p := range panels {
		x0 := left + pi*(pw+100)
		ymax := 0.0
		for _, s := range series {
			for _, r := range s {
				ymax = math.Max(ymax, p.val(r))
			}
		}
		if ymax == 0 {
			ymax = 1
		}
		ymax *= 1.1
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", x0, top, pw, ph)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x0, top-8, p.label)
		for i := 0; i <= 4; i++ {
			y := top + ph - ph*i/4
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#eee"/><text x="%d" y="%d" text-anchor="end">%.4g</text>`+"\n",
				x0, x0+pw, y, y, x0-4, y+4, ymax*float64(i)/4)
		}
		for w := 1; w <= maxW; w *= 2 {
			x := x0 + int(float64(pw)*math.Log2(float64(w))/xmax)
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%d</text>`+"\n", x, top+ph+16, w)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">workers</text>`+"\n", x0+pw/2, top+ph+34)
		for _, n := range names {
			s := series[n]
			sort.Slice(s, func(i, j int) bool { return s[i].Workers < s[j].Workers })
			var pts []string
			for _, r := range s {
				x := float64(x0) + float64(pw)*math.Log2(float64(r.Workers))/xmax
				y := float64(top+ph) - float64(ph)*p.val(r)/ymax
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, color(n))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color(n))
		}
	}
	for i, n := range names {
		x := left + i*140
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, H-22, color(n), x+16, H-12, html.EscapeString(n))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func color(n string) string {
	if c, ok := colors[n]; ok {
		return c
	}
	return "#444"
}
