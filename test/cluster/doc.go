// Package cluster runs Linkslot as it runs in production — two
// authorization servers and three resource servers, each a separate process
// built from ./authserver and ./resourceserver, all on one PostgreSQL — and
// holds the reliability scenarios against it: concurrent agents
// racing for overlapping slots across replicas, idempotent retries sent to
// different replicas, refresh-token replay and parallel refreshes (the
// refresh grace) across authorization servers,
// disconnection seen by every resource server, and fault injection (the
// database stopped and restarted mid-load, a resource server killed with
// SIGKILL, a slow database behind a delaying TCP proxy). TestNotificationsAcrossProcesses
// runs its own cluster (one authorization server, stopped once the agents
// have linked, and three resource servers; a go-smtp server, two webhook
// endpoints made through /admin/api/webhooks, LINKSLOT_OUTBOX_LEASE=5s):
// 100 bookings at once deliver every message
// exactly once per id, and a resource server killed with SIGKILL while it
// holds leases (one delivery held at the endpoint until it dies) loses
// nothing: the survivors deliver everything once the lease expires, with
// the original webhook-ids.
//
// Two measurements live here too, because they need the built servers:
// TestClusterLoad (opt-in with LINKSLOT_CLUSTER_LOAD=1; make bench runs it)
// drives refresh rotation, authenticated availability reads and confirmed
// create+cancel at 1, 4, 16 and 64 workers spread round-robin over the
// replicas, and writes var/bench/cluster-report.txt (make bench's table
// layout, through bench/report) and var/bench/cluster-<workload>.svg;
// TestStartupTime logs how long each server takes from process start to its
// first 200 on /readyz on an empty, just-migrated SQLite and PostgreSQL
// database (issue 10), asserting only that each becomes ready.
//
// Design:
//   - Every cluster gets its own PostgreSQL, started with initdb in a
//     temporary folder (LINKSLOT_TEST_PG_BIN names the binaries; otherwise
//     the usual Debian folder is searched). Owning the database lets the
//     fault tests stop it without disturbing other packages' tests. Without
//     initdb the tests skip, except under CI=true where they fail.
//   - Both authorization servers share one issuer URL string (the first
//     one's address), so tokens from either verify at every resource server;
//     the resource servers fetch the JWKS from issuer + "/jwks.json". The
//     three resource servers share one resource URI (the token audience);
//     each accepts any loopback Host, so a request may go to any of them.
//   - Processes run in their own process group with a parent-death signal;
//     t.Cleanup kills each group, so nothing outlives the test even when it
//     fails or the test binary dies.
//   - Accounts get cheap argon2id hashes (the parameters are read back from
//     each hash) so hundreds of sign-ins through the real login form stay
//     fast; the flow itself — authorize, sign-in form, consent form, PKCE
//     code exchange — is the production one.
//   - Every load loop is bounded in count and in time. A plain `go test`
//     (what `make test` runs) uses small counts; `make test-cluster` runs the
//     full counts (LINKSLOT_CLUSTER_FULL=1); `go test -short` skips the
//     cluster altogether.
package cluster
