// Command bench is Linkslot's whole-system load driver (make bench): it
// starts the authorization server and the resource server in process on
// httptest listeners, on SQLite and (when LINKSLOT_TEST_POSTGRES_URL is set,
// as scripts/with-postgres does) on PostgreSQL, and measures each workload
// at increasing concurrency (1, 4, 16, 64 workers) until its p99 passes
// 100 ms, against bare baselines measured in the same run: a no-op HTTP
// handler and a no-op MCP tool on the same SDK. It measures each level
// with bench/report.Run and writes a text report and one SVG chart per
// workload (throughput and p99 against concurrency) through bench/report,
// which the cluster load test (test/cluster TestClusterLoad) shares.
//
// Workloads (CONTRACT §9):
//   - refresh: each worker rotates its own refresh-token chain
//   - code-flow: a signed-in person with remembered consent: authorize →
//     code → token with PKCE
//   - jwks: GET /jwks.json
//   - availability-auth / availability-noauth: check_business_availability
//     with bearer verification, and on the same server with it switched off
//   - create-cancel: a confirmed create then a confirmed cancel (when the
//     resource server serves the mutations)
//   - refresh and code-flow at 64 workers on a 4-connection pool
//     (PostgreSQL): must complete with 0 failures and no stall
//   - code-flow-grown (PostgreSQL): the code flow at 16 workers again after
//     a growth step of 500,000 spent token rows that nothing has analyzed
//     (testkit.FillSpentTokens); the report gives grown/fresh
//
// scripts/bench then runs bench/signinburst: 200 concurrent sign-ins
// against a real authorization server process (status codes, latency,
// peak resident memory), appended to the report.
//
// Every run is bounded: each level runs for -dur (or -max operations), and
// the whole program stops escalating at -budget.
package main
