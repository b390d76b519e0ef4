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
// Workloads (docs/reference.md §9):
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
//   - code-flow-fresh, code-flow-grown (PostgreSQL): the code flow at 16
//     workers on the system's database and on a second system's, whose
//     token_sessions got a growth step of 500,000 spent rows that nothing
//     has analyzed (testkit.FillSpentTokens; -growth sets the size, 0
//     skips it), in alternating windows (three each) after a CHECKPOINT,
//     a sync of the machine's write-back and an unrecorded warm-up window
//     on each, so that the grown one does not measure the writes the step
//     left behind; the report gives grown/fresh
//   - refresh-floor (PostgreSQL, 16 workers, on the default pool and on 4
//     connections): the rotation's floor (floor.go) — the product's own two
//     token statements (sqlstore.PrefetchStatement,
//     sqlstore.TokenBatchStatement) sent bare to pgx on a database/sql
//     pool, as the product sends them (sqlstore.Each), plus the
//     new tokens' HMAC, hashes and one ES256 signature (the ID token the
//     product also signs is its own cost) — measured in alternating
//     windows with the product's rotation (refresh-vs-floor), a floor
//     that stores no access-token row (refresh-floor-no-access-row) and
//     one that sends the two statements inside BEGIN … COMMIT, as the
//     performance issue defined the floor (refresh-floor-in-tx; the
//     product sends no transaction, so refresh-floor is the stricter),
//     and the floor served by a bare net/http handler to the same load
//     generator as the product (refresh-floor-http: what HTTP alone
//     costs the floor, and how near the product comes to a bare HTTP
//     server that does the same storage); the report gives refresh/floor
//     against each
//   - code-flow-floor (PostgreSQL, 16 workers, 4 connections): the
//     signed-in code flow's floor (codefloor.go) — the product's own five
//     storage calls of a flow (the person's web session and account, the
//     client with their link, the code's batch, the exchange's prefetch
//     and its batch) through a store of its own of the same pool size,
//     plus the PKCE check, the HMACs and hashes, and the two ES256
//     signatures (access and ID token) — in alternating windows with the
//     product's code flow (code-flow-vs-floor); the report gives code
//     flow/floor, which says how much of what its storage allows the
//     product reaches whatever the machine's speed, where the code flow's
//     own rate is a figure of the machine too
//   - availability-vs-noop / noop-domain-vs / noop-tool-vs: the
//     authenticated availability call, the same call on the same server
//     with the booking engine replaced by a no-op (testkit.NoopDomain: the
//     performance target's baseline), and a bare SDK server's no-op tool,
//     in alternating windows at 16 clients
//   - the same refresh and code flow at 16 and 64 workers on 4 connections
//     (pg-pool4), the setting of the performance targets: the two worker
//     counts in alternating windows, after a CHECKPOINT and a sync that
//     write out what the earlier systems and the growth step left dirty
//
// Each window of the refresh and the code flow on 4 connections, and of
// the floor comparison, is watched (conns.go): every 10 ms, database/sql's
// count of the pool's connections handed out, and pg_stat_activity's
// state of the pool's backends (each pool's connections carry their own
// application_name) — executing, waiting for a commit's WAL flush, other
// waits, or idle waiting for the Go process. The report averages them per
// workload, which shows what sets a rate on 4 connections: every one of
// them in use, and most of that time waiting for the process, not for
// PostgreSQL. Each line also gives the process's CPU time per operation
// (server and load generator together), and -floor-cpu D makes every
// floor rotation spend D more CPU between its statements, holding no
// connection: a floor given the product's CPU per rotation runs at the
// product's rate on 4 connections.
//
// -soak DURATION (make bench-soak: 10 minutes) runs only the rotation
// soak (soak.go): 16 workers on 4 connections with the janitor running, on
// a database that starts with 500,000 spent rows expired an hour ago,
// reporting every 30 s the rotations and what token_sessions holds (live,
// spent within the hour, older); it writes soak.txt.
//
// scripts/bench then runs bench/signinburst: 200 concurrent sign-ins
// against a real authorization server process (status codes, latency,
// peak resident memory), appended to the report.
//
// -only REGEXP runs just the workloads it matches (code-flow-grown: the
// growth step too), and -cpuprofile FILE records a CPU profile of the run
// -profile names (workload/backend/workers, code-flow/pg-pool4/16 by
// default): for profiling and quick checks, since the report then has
// only those workloads.
//
// Every run is bounded: each level runs for -dur (or -max operations), and
// the whole program stops escalating at -budget.
package main
