// Command testreport reads `go test -json` on standard input, prints each
// package's result and the output of every failing test, and ends with the
// counts: all tests, and the PostgreSQL ones apart. It exits 1 when anything
// failed (a test, a build, a package).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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
	out := map[string][]string{} // package/test -> output lines
	var pass, fail, skip, pgPass, pgSkip, pgFail int
	failedPkgs := 0
	var failedTests []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // build errors arrive as plain text
			continue
		}
		key := e.Package + " " + e.Test
		pg := strings.Contains(strings.ToLower(e.Test), "postgres")
		switch e.Action {
		case "output":
			if len(out[key]) < 400 {
				out[key] = append(out[key], e.Output)
			}
		case "pass":
			if e.Test == "" {
				fmt.Printf("ok   %s (%.1fs)\n", e.Package, e.Elapsed)
			} else {
				pass++
				if pg {
					pgPass++
				}
			}
			delete(out, key)
		case "skip":
			if e.Test == "" {
				fmt.Printf("--   %s (no tests)\n", e.Package)
			} else {
				skip++
				if pg {
					pgSkip++
				}
			}
			delete(out, key)
		case "fail":
			if e.Test == "" {
				failedPkgs++
				fmt.Printf("FAIL %s (%.1fs)\n", e.Package, e.Elapsed)
				for _, l := range out[key] {
					fmt.Print("     ", l)
				}
			} else {
				fail++
				if pg {
					pgFail++
				}
				failedTests = append(failedTests, key)
				fmt.Printf("--- FAIL: %s %s\n", e.Package, e.Test)
				for _, l := range out[key] {
					fmt.Print("     ", l)
				}
			}
			delete(out, key)
		}
	}
	sort.Strings(failedTests)
	if len(failedTests) > 0 {
		fmt.Println("\nfailed tests:")
		for _, t := range failedTests {
			fmt.Println("  ", t)
		}
	}
	fmt.Printf("\nPostgreSQL tests: %d passed, %d failed, %d skipped\n", pgPass, pgFail, pgSkip)
	fmt.Printf("%d passed, %d failed, %d skipped\n", pass, fail, skip)
	if fail > 0 || failedPkgs > 0 {
		os.Exit(1)
	}
}
