// Command testreport reads `go test -json` on standard input, prints each
// package's result and the output of every failing test, lists the skipped
// tests by the reason they gave (so that a machine without Chromium, say,
// says so rather than only counting), and ends with the counts: all tests,
// and the PostgreSQL ones apart. It exits 1 when anything failed (a test, a
// build, a package).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	if !report(os.Stdin, os.Stdout) {
		os.Exit(1)
	}
}

// report writes the report of the go test -json stream r to w, and says
// whether everything passed.
func report(r io.Reader, w io.Writer) (ok bool) {
	out := map[string]*output{} // package/test -> its output
	var pass, fail, skip, pgPass, pgSkip, pgFail int
	failedPkgs := 0
	var failedTests []string
	skipped := map[string][]string{} // reason -> tests
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(w, string(line)) // build errors arrive as plain text
			continue
		}
		key := e.Package + " " + e.Test
		pg := strings.Contains(strings.ToLower(e.Test), "postgres")
		switch e.Action {
		case "output":
			o := out[key]
			if o == nil {
				o = &output{}
				out[key] = o
			}
			o.add(e.Output)
		case "pass":
			if e.Test == "" {
				fmt.Fprintf(w, "ok   %s (%.1fs)\n", e.Package, e.Elapsed)
			} else {
				pass++
				if pg {
					pgPass++
				}
			}
			delete(out, key)
		case "skip":
			if e.Test == "" {
				fmt.Fprintf(w, "--   %s (no tests)\n", e.Package)
			} else {
				skip++
				if pg {
					pgSkip++
				}
				why := skipReason(out[key].lines())
				skipped[why] = append(skipped[why], e.Package+" "+e.Test)
			}
			delete(out, key)
		case "fail":
			if e.Test == "" {
				failedPkgs++
				fmt.Fprintf(w, "FAIL %s (%.1fs)\n", e.Package, e.Elapsed)
				for _, l := range out[key].lines() {
					fmt.Fprint(w, "     ", l)
				}
			} else {
				fail++
				if pg {
					pgFail++
				}
				failedTests = append(failedTests, key)
				fmt.Fprintf(w, "--- FAIL: %s %s\n", e.Package, e.Test)
				for _, l := range out[key].lines() {
					fmt.Fprint(w, "     ", l)
				}
			}
			delete(out, key)
		}
	}
	sort.Strings(failedTests)
	if len(failedTests) > 0 {
		fmt.Fprintln(w, "\nfailed tests:")
		for _, t := range failedTests {
			fmt.Fprintln(w, "  ", t)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "\nskipped:")
		reasons := make([]string, 0, len(skipped))
		for why := range skipped {
			reasons = append(reasons, why)
		}
		sort.Strings(reasons)
		for _, why := range reasons {
			tests := skipped[why]
			sort.Strings(tests)
			fmt.Fprintf(w, "   %d: %s\n", len(tests), why)
			for i, t := range tests {
				if i == maxListed && len(tests) > maxListed+1 {
					fmt.Fprintf(w, "       … and %d more (var/test.json has them all)\n", len(tests)-i)
					break
				}
				fmt.Fprintln(w, "     ", t)
			}
		}
	}
	fmt.Fprintf(w, "\nPostgreSQL tests: %d passed, %d failed, %d skipped\n", pgPass, pgFail, pgSkip)
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
	return fail == 0 && failedPkgs == 0
}

// output keeps a test's first and last keptLines lines of output: the
// start says what the test set up, the end why it failed or skipped, and
// a test that logs a great deal does not hold all of it in memory.
type output struct {
	head, tail []string
	left       int // lines dropped between head and tail
}

const keptLines = 200

func (o *output) add(line string) {
	if len(o.head) < keptLines {
		o.head = append(o.head, line)
		return
	}
	if len(o.tail) == 2*keptLines {
		o.left += keptLines
		o.tail = append(o.tail[:0], o.tail[keptLines:]...)
	}
	o.tail = append(o.tail, line)
}

// lines is what was kept, with a line in place of what was not; nil for
// a test that wrote nothing.
func (o *output) lines() []string {
	if o == nil {
		return nil
	}
	tail, left := o.tail, o.left
	if len(tail) > keptLines {
		left += len(tail) - keptLines
		tail = tail[len(tail)-keptLines:]
	}
	lines := append([]string(nil), o.head...)
	if left > 0 {
		lines = append(lines, fmt.Sprintf("… %d lines left out (var/test.json has them all)\n", left))
	}
	return append(lines, tail...)
}

// maxListed is how many tests a skip reason lists by name: without
// PostgreSQL, hundreds of subtests skip for one reason.
const maxListed = 10

// skipReason is the last line a skipped test wrote before it skipped, the
// argument of its t.Skip, without the file:line in front.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if file, rest, ok := strings.Cut(l, ": "); ok && strings.Contains(file, ".go:") && !strings.Contains(file, " ") {
			l = rest
		}
		return l
	}
	return "(no reason given)"
}
