// Package report writes Linkslot's load figures: the text table of
// var/bench/report.txt (one row per workload, backend and worker count:
// ops, ops/s, p50, p99, max, failures) and one SVG chart per workload
// (throughput and p99 against workers on a log2 axis, one line per
// backend). Both the in-process load driver (./bench, `make bench`) and the
// cluster load test (test/cluster TestClusterLoad) measure into a Result
// and write through this package, so their reports share one layout.
//
// Design: both drivers measure a level with Run (n workers, a duration and
// an operation cap, every operation's latency kept) and a Result is
// summarized from those raw latencies (Summarize sorts them and takes p50,
// p99 and max), so every caller measures and computes percentiles the same
// way. The writers only format; the operations, and any section of a
// report that only one caller has (ratios, targets), stay with
// the caller. Charts are plain SVG text with no dependency.
package report
