package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name          string
		lat           []int // ms
		p50, p99, max int
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []int{7}, 7, 7, 7},
		{"unsorted hundred", func() []int {
			var l []int
			for i := 100; i >= 1; i-- {
				l = append(l, i)
			}
			return l
		}(), 51, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lat []time.Duration
			for _, v := range tc.lat {
				lat = append(lat, time.Duration(v)*time.Millisecond)
			}
			r := Summarize("w", "b", 4, lat, 1, 2*time.Second, "e")
			if r.Ops != len(tc.lat) || r.Failures != 1 || r.Workers != 4 || r.FirstErr != "e" {
				t.Fatalf("counts: %+v", r)
			}
			if r.P50 != time.Duration(tc.p50)*time.Millisecond || r.P99 != time.Duration(tc.p99)*time.Millisecond || r.Max != time.Duration(tc.max)*time.Millisecond {
				t.Fatalf("p50 %v p99 %v max %v; want %d %d %d ms", r.P50, r.P99, r.Max, tc.p50, tc.p99, tc.max)
			}
			if want := float64(len(tc.lat)) / 2; r.Throughput() != want {
				t.Fatalf("throughput %v, want %v", r.Throughput(), want)
			}
		})
	}
	if (Result{Ops: 3}).Throughput() != 0 {
		t.Fatal("a Result without elapsed time has no throughput")
	}
}

func TestTableAndCharts(t *testing.T) {
	rs := []Result{
		{Workload: "refresh", Backend: "cluster", Workers: 1, Ops: 100, Elapsed: time.Second, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond},
		{Workload: "refresh", Backend: "cluster", Workers: 4, Ops: 300, Failures: 2, Elapsed: time.Second, FirstErr: "refresh: 503"},
	}
	var b strings.Builder
	WriteTable(&b, rs)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, col := range []string{"workload", "backend", "workers", "ops", "ops/s", "p50 ms", "p99 ms", "max ms", "failures"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %q: %s", col, lines[0])
		}
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "refresh cluster 1 100 100 1.0 2.0 3.0 0" {
		t.Errorf("row: %q", lines[1])
	}
	if fl := FailureLines(rs); len(fl) != 1 || !strings.Contains(fl[0], "refresh/cluster/4: 2 failures, first: refresh: 503") {
		t.Errorf("failure lines: %q", fl)
	}
	if _, ok := Find(rs, "refresh", "cluster", 4); !ok {
		t.Error("Find missed a row")
	}
	dir := t.TempDir()
	if err := WriteCharts(dir, "cluster-", rs); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "cluster-refresh.svg"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.HasPrefix(s, "<svg") || !strings.HasSuffix(s, "</svg>\n") || strings.Count(s, "<polyline") != 2 || !strings.Contains(s, colors["cluster"]) {
		t.Errorf("chart:\n%s", s)
	}
}
