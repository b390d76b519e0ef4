package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is one workload at one concurrency.
type Result struct {
	Workload, Backend string
	Workers           int
	Ops, Failures     int
	Elapsed           time.Duration
	P50, P99, Max     time.Duration
	FirstErr          string
}

// Throughput is operations per second over the level's wall time.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Summarize builds the Result of one level from every operation's latency
// (failed ones included); lat is sorted in place.
func Summarize(workload, backend string, workers int, lat []time.Duration, failures int, elapsed time.Duration, firstErr string) Result {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := Result{Workload: workload, Backend: backend, Workers: workers, Ops: len(lat), Failures: failures, Elapsed: elapsed, FirstErr: firstErr}
	if len(lat) > 0 {
		r.P50 = lat[len(lat)/2]
		r.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
		r.Max = lat[len(lat)-1]
	}
	return r
}

// Ms is d in milliseconds, to the microsecond.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// WriteHeader writes the report's first line: title, time, platform, CPUs
// and how long the run took.
func WriteHeader(w io.Writer, title string, took time.Duration) {
	fmt.Fprintf(w, "%s — %s, %s/%s, %d CPUs, GOMAXPROCS %d, took %s\n",
		title, time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), took.Round(time.Second))
}

// WriteTable writes the right-aligned table, one row per Result in order.
func WriteTable(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbackend\tworkers\tops\tops/s\tp50 ms\tp99 ms\tmax ms\tfailures\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t\n", r.Workload, r.Backend, r.Workers, r.Ops, r.Throughput(),
			Ms(r.P50), Ms(r.P99), Ms(r.Max), r.Failures)
	}
	tw.Flush()
}

// Find returns the Result of workload on backend at n workers.
func Find(rs []Result, workload, backend string, n int) (Result, bool) {
	for _, r := range rs {
		if r.Workload == workload && r.Backend == backend && r.Workers == n {
			return r, true
		}
	}
	return Result{}, false
}

// FailureLines lists, for every Result with a failure, its count and first
// error ("  workload/backend/workers: N failures, first: …").
func FailureLines(rs []Result) []string {
	var out []string
	for _, r := range rs {
		if r.FirstErr != "" {
			out = append(out, fmt.Sprintf("  %s/%s/%d: %d failures, first: %s", r.Workload, r.Backend, r.Workers, r.Failures, r.FirstErr))
		}
	}
	return out
}

// WriteCharts writes one SVG per workload, dir/<prefix><workload>.svg:
// throughput (left) and p99 (right) against workers on a log2 axis, one
// line per backend.
func WriteCharts(dir, prefix string, rs []Result) error {
	by := map[string]map[string][]Result{}
	for _, r := range rs {
		if by[r.Workload] == nil {
			by[r.Workload] = map[string][]Result{}
		}
		by[r.Workload][r.Backend] = append(by[r.Workload][r.Backend], r)
	}
	for wl, series := range by {
		if err := os.WriteFile(filepath.Join(dir, prefix+wl+".svg"), []byte(Chart(wl, series)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var colors = map[string]string{"sqlite": "#1f77b4", "postgres": "#d62728", "pg-pool4": "#9467bd", "none": "#2ca02c", "cluster": "#ff7f0e"}

// Chart is the SVG of one workload: series maps a backend to its levels.
func Chart(title string, series map[string][]Result) string {
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
		val   func(Result) float64
	}{
		{"throughput (ops/s)", func(r Result) float64 { return r.Throughput() }},
		{"p99 latency (ms)", func(r Result) float64 { return Ms(r.P99) }},
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
