package main

import (
	"fmt"
	"strings"
	"testing"
)

// A stream with a pass, a failure and skips: the failure's output is
// printed, the skips are listed under their reasons, and the counts add up.
func TestReport(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":0.1}`,
		`{"Action":"output","Package":"p/a","Test":"TestBrowser","Output":"=== RUN   TestBrowser\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestBrowser","Output":"    browser_test.go:12: chromium is not installed\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestBrowser"}`,
		`{"Action":"output","Package":"p/b","Test":"TestPages","Output":"    pages_test.go:7: chromium is not installed\n"}`,
		`{"Action":"skip","Package":"p/b","Test":"TestPages"}`,
		`{"Action":"skip","Package":"p/b","Test":"TestQuiet"}`,
		`{"Action":"output","Package":"p/b","Test":"TestStore/postgres","Output":"    store_test.go:40: want 2, got 3\n"}`,
		`{"Action":"fail","Package":"p/b","Test":"TestStore/postgres"}`,
		`{"Action":"pass","Package":"p/a","Elapsed":1.5}`,
		`{"Action":"fail","Package":"p/b","Elapsed":2}`,
	}, "\n")
	var out strings.Builder
	if report(strings.NewReader(stream), &out) {
		t.Error("report says everything passed; TestStore/postgres failed")
	}
	got := out.String()
	wantLines(t, got,
		"ok   p/a (1.5s)\n",
		"--- FAIL: p/b TestStore/postgres\n         store_test.go:40: want 2, got 3\n",
		"FAIL p/b (2.0s)\n",
		"skipped:\n   1: (no reason given)\n      p/b TestQuiet\n   2: chromium is not installed\n      p/a TestBrowser\n      p/b TestPages\n",
		"PostgreSQL tests: 0 passed, 1 failed, 0 skipped\n1 passed, 1 failed, 3 skipped\n")

	// Many tests skipped for one reason are listed up to maxListed.
	var many []string
	for i := 0; i < 30; i++ {
		many = append(many, fmt.Sprintf(`{"Action":"output","Package":"p/c","Test":"TestPG/%02d","Output":"    pg_test.go:9: no PostgreSQL\n"}`, i),
			fmt.Sprintf(`{"Action":"skip","Package":"p/c","Test":"TestPG/%02d"}`, i))
	}
	out.Reset()
	report(strings.NewReader(strings.Join(many, "\n")), &out)
	if got := out.String(); !strings.Contains(got, "   30: no PostgreSQL\n") || !strings.Contains(got, "      p/c TestPG/09\n       … and 20 more") ||
		strings.Contains(got, "TestPG/10") {
		t.Errorf("30 skips for one reason:\n%s", got)
	}

	out.Reset()
	if !report(strings.NewReader(`{"Action":"pass","Package":"p/a","Test":"TestOK"}`), &out) {
		t.Errorf("a stream with only a pass failed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "skipped:") {
		t.Errorf("no skips, yet a skipped list:\n%s", out.String())
	}
}

// A test that writes more than it keeps is reported by its first and last
// lines: its skip reason is its last line, and a failure shows where it
// began and how it ended, with the count of lines between.
func TestReportLongOutput(t *testing.T) {
	var stream []string
	for i := 0; i < 1000; i++ {
		stream = append(stream,
			fmt.Sprintf(`{"Action":"output","Package":"p/a","Test":"TestChatty","Output":"    chatty_test.go:5: line %d\n"}`, i),
			fmt.Sprintf(`{"Action":"output","Package":"p/a","Test":"TestLoud","Output":"    loud_test.go:5: line %d\n"}`, i))
	}
	stream = append(stream,
		`{"Action":"output","Package":"p/a","Test":"TestChatty","Output":"    chatty_test.go:9: needs a GPU\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestChatty"}`,
		`{"Action":"output","Package":"p/a","Test":"TestLoud","Output":"    loud_test.go:9: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestLoud"}`)
	var out strings.Builder
	report(strings.NewReader(strings.Join(stream, "\n")), &out)
	got := out.String()
	wantLines(t, got,
		"   1: needs a GPU\n      p/a TestChatty\n",
		"--- FAIL: p/a TestLoud\n         loud_test.go:5: line 0\n",
		"loud_test.go:5: line 199\n     … 601 lines left out (var/test.json has them all)\n         loud_test.go:5: line 801\n",
		"loud_test.go:5: line 999\n         loud_test.go:9: want 1, got 2\n")
	if strings.Contains(got, "line 200\n") || strings.Contains(got, "line 800\n") {
		t.Errorf("report keeps lines it should leave out:\n%s", got)
	}
}

// wantLines fails t for each of wants that the report got lacks.
func wantLines(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}
