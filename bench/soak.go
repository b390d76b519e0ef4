package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/testkit"
)

// soak is the rotation soak (make bench-soak, -soak DURATION): 16 workers
// rotating their refresh chains on PostgreSQL with a pool of 4 for the
// whole duration, with the janitor running as in every server process
// (app.StartJanitor), on a database that starts with `spent` spent token
// rows that expired an hour before (what a database that ran without a
// janitor holds). Every window it reports the rotations (throughput, p99,
// failures) and what token_sessions holds: live sessions (active, not
// expired), sessions spent or expired that were created within the hour,
// and older ones — the rows the janitor still has to delete. The target:
// the table stays within the live sessions plus one hour of spent ones
// (older reaches 0 and stays there) while the rotations keep their pace.
func soak(ctx context.Context, tmp, pgURL, out string, d, window time.Duration, spent int) error {
	if pgURL == "" {
		return fmt.Errorf("soak: LINKSLOT_TEST_POSTGRES_URL is not set (run through scripts/with-postgres)")
	}
	const workers = 16
	began := time.Now()
	sys, err := newSystem(ctx, "postgres", tmp, pgURL, 4, workers)
	if err != nil {
		return err
	}
	defer sys.Close()
	people, err := signInAll(ctx, sys, workers)
	if err != nil {
		return err
	}
	if spent > 0 {
		if err := testkit.FillSpentTokens(sys.store.DB(), spent, demo.ClientID, sys.accounts[0].ID); err != nil {
			return fmt.Errorf("soak: fill: %w", err)
		}
		// FillSpentTokens turns autovacuum off for its bulk load; the soak
		// runs with the stock settings.
		if err := sys.store.DB().Exec(`ALTER TABLE token_sessions RESET (autovacuum_enabled)`).Error; err != nil {
			return err
		}
	}
	jctx, stopJanitor := context.WithCancel(ctx)
	defer stopJanitor()
	if err := app.StartJanitor(jctx, "authserver", sys.store, nil, discard); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Linkslot rotation soak — %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Command: make bench-soak (scripts/with-postgres go run ./bench -soak %s). PostgreSQL, pool of 4, %d workers each rotating its own refresh chain, the janitor running (every minute, batches of 500).\n", d, workers)
	fmt.Fprintf(&b, "Start: %d spent token rows that expired an hour ago, plus the %d people's own.\n\n", spent, workers)
	fmt.Fprintf(&b, "%8s %10s %8s %8s %9s %10s %10s %9s %9s %s\n", "elapsed", "rotations", "per s", "p99 ms", "failures", "rows", "live", "spent<1h", "older", "table MB")
	line := func(elapsed time.Duration, r *result) error {
		var c struct{ Total, Live, Recent, Older, Bytes int64 }
		err := sys.store.DB().Raw(`SELECT count(*) AS total,
 count(*) FILTER (WHERE active AND expires_at > now()) AS live,
 count(*) FILTER (WHERE NOT (active AND expires_at > now()) AND created_at > now() - interval '1 hour') AS recent,
 count(*) FILTER (WHERE NOT (active AND expires_at > now()) AND created_at <= now() - interval '1 hour') AS older,
 pg_total_relation_size('token_sessions') AS bytes
FROM token_sessions`).Scan(&c).Error
		if err != nil {
			return err
		}
		ops, rate, p99, fails := 0, 0.0, 0.0, 0
		if r != nil {
			ops, rate, p99, fails = r.Ops, r.Throughput(), msf(r.P99), r.Failures
		}
		row := fmt.Sprintf("%8s %10d %8.0f %8.1f %9d %10d %10d %9d %9d %.1f", elapsed.Round(time.Second), ops, rate, p99, fails, c.Total, c.Live, c.Recent, c.Older, float64(c.Bytes)/(1<<20))
		fmt.Fprintln(&b, row)
		fmt.Fprintln(os.Stderr, "soak", row)
		return nil
	}
	if err := line(0, nil); err != nil {
		return err
	}
	start := time.Now()
	var total, fails int
	for time.Since(start) < d {
		r := run(ctx, "soak", "pg-pool4", workers, min(window, d-time.Since(start)), 1<<62, func(ctx context.Context, w int) error { return people[w].rotate(ctx) })
		total += r.Ops
		fails += r.Failures
		if err := line(time.Since(start), &r); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\n%d rotations in %s (%.0f/s), %d failures; took %s in all.\n", total, time.Since(start).Round(time.Second),
		float64(total)/time.Since(start).Seconds(), fails, time.Since(began).Round(time.Second))
	fmt.Fprintf(&b, "live: active and unexpired; spent<1h: spent or expired, created within the hour; older: spent or expired and created over an hour ago.\n")
	fmt.Fprintf(&b, "Within the target when older is 0: the table then holds the live sessions plus at most one hour of spent ones.\n")
	fmt.Fprintf(&b, "A spent refresh token is kept while it could still have been used (reuse detection, janitor package doc), so a soak longer than an hour would also count those under older.\n")
	os.Stdout.WriteString(b.String())
	return os.WriteFile(filepath.Join(out, "soak.txt"), []byte(b.String()), 0o644)
}
