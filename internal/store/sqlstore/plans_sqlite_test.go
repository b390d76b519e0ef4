package sqlstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/janitor"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestGrowingTablePlansSQLite holds the statements that run on their own,
// every second or every minute, whatever the traffic — the janitor's
// sweeps and the outbox worker's lease — the token update of a link's
// revocation, the delivery log's pages, the outbox gauges' count, the
// audit log's pages and a staff member's calendar feed, to searches that
// an index serves entirely on SQLite, the embedded default: no statement
// scans its table, and none sorts, since their batches are taken in index
// order. Each of those that write holds SQLite's write lock while it
// runs, so a scan of a table that grows (every live refresh token, every
// queued retry) stalls token issuance with it. The
// product never runs ANALYZE on SQLite, so the plan of this small
// database is the plan of a large one; TestStaffBookingsAtScaleSQLite
// shows the same for bookings with the data to go with it. The rate
// windows' sweep scans on purpose (it reads only live windows, and
// ratewindows.go says why) and is not among them.
func TestGrowingTablePlansSQLite(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	now := time.Now().UTC()
	if err := s.CreateAccount(ctx, store.Account{ID: "acct", Email: "acct@example.com", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(ctx, store.Client{ID: "agent", Name: "Agent", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
		AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"}, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	link, err := s.UpsertLink(ctx, "acct", "agent", []string{"openid"}, now)
	if err != nil {
		t.Fatal(err)
	}
	db := s.DB()
	var captures []func() []sqltest.Statement
	for _, table := range []string{"token_sessions", "outbox_messages", "idempotency_records", "client_assertions",
		"account_tokens", "webauthn_ceremonies", "web_sessions", "audit_events", "bookings", "client_registrations"} {
		captures = append(captures, sqltest.Capture(t, db, table))
	}
	run := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// Every janitor task, as the janitor runs them (rate_windows, which
	// scans, is not among the tables captured).
	for _, task := range janitor.Tasks(s) {
		_, err := task.Sweep(ctx, now, 500)
		run("sweep "+task.Name, err)
	}
	_, err = s.LeaseMessages(ctx, "w1", now, time.Minute, 16)
	run("lease", err)
	_, err = s.LeaseMessages(ctx, "w1", now, time.Minute, 16, store.ChannelEmail)
	run("lease e-mail only", err)
	run("revoke link", s.RevokeLink(ctx, link.ID, now))
	for _, f := range []store.OutboxFilter{{}, {Channel: store.ChannelWebhook}, {Status: store.OutboxFailed},
		{Status: store.OutboxFailed, Channel: store.ChannelEmail}} {
		_, err = s.ListMessages(ctx, f)
		run("delivery log", err)
	}
	_, err = s.PurgeTokenSessions(ctx, now.Add(-time.Hour))
	run("purge", err)
	_, err = s.CountUndelivered(ctx)
	run("outbox gauges", err)
	for _, limit := range []int{1, 2, 50} {
		_, err = s.ListAuditEvents(ctx, limit, 0)
		run("audit log", err)
	}
	_, err = s.ListFeedBookings(ctx, store.FeedBookingFilter{BusinessID: "biz", StaffID: "stf", Since: now.Add(-30 * 24 * time.Hour)})
	run("staff feed", err)

	seen := map[string]bool{}
	checked := 0
	for _, captured := range captures {
		for _, st := range captured() {
			if seen[st.SQL] || strings.HasPrefix(strings.TrimSpace(st.SQL), "INSERT") {
				continue // the same statement seen through another table, or the fixture's
			}
			seen[st.SQL] = true
			plan, err := sqltest.QueryPlan(ctx, s.SQL(), st.SQL, st.Vars...)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			q := strings.Join(strings.Fields(st.SQL), " ")
			t.Logf("%.100s\n    %s", q, strings.Join(plan, "\n    "))
			// Three reads whose every plan step is an index's, but not the
			// right one's: the gauges' count must not go to the table for
			// each undelivered message's channel, a page by status and
			// channel must not walk every message of the channel, and a
			// staff member's feed must search by the staff member and
			// start, not by the business.
			switch {
			case strings.Contains(q, "count(*)") && strings.Contains(q, "outbox_messages"):
				if !slices.ContainsFunc(plan, func(p string) bool { return strings.Contains(p, "COVERING INDEX outbox_messages_status_channel") }) {
					t.Errorf("%s\n  the gauges' count reads the table: %q", q, plan)
				}
			case strings.Contains(q, "status = ? AND channel = ?"):
				if !slices.ContainsFunc(plan, func(p string) bool { return strings.Contains(p, "(status=? AND channel=?)") }) {
					t.Errorf("%s\n  the page walks more than its status and channel: %q", q, plan)
				}
			case strings.Contains(q, "bookings") && strings.Contains(q, "staff_id = ?"):
				if !slices.ContainsFunc(plan, func(p string) bool { return strings.Contains(p, "(staff_id=? AND starts_at>?)") }) {
					t.Errorf("%s\n  the staff feed does not search by staff member and start: %q", q, plan)
				}
			}
			// A plain SCAN reads the table. A SCAN through an index walks it
			// in the ORDER BY's order and stops at the LIMIT, which bounds it
			// only with no WHERE: with one, it reads past every row that
			// fails the condition. A temp B-tree for the ORDER BY sorts
			// everything found first (one for its last term only sorts rows
			// tied on the others).
			filtered := strings.Contains(q, " WHERE ")
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN ") && (filtered || !strings.Contains(step, " USING ")) ||
					strings.Contains(step, "TEMP B-TREE FOR ORDER BY") {
					t.Errorf("%s\n  plan step %q: the statement reads more than its batch\n  plan: %q", q, step, plan)
				}
			}
		}
	}
	// 5 token sweeps share one statement; then the 6 other sweeps, 2
	// leases, the revocation's token update, 4 delivery log pages, the
	// gauges' count, 3 audit pages, the staff feed and the tests' purge.
	if checked < 20 {
		t.Fatalf("checked %d statements, want every one the test runs", checked)
	}
}

// TestTokenSweepAtScaleSQLite times the janitor's token sweep on SQLite
// across the upgrade that indexes token sessions by kind and expiry
// (migration 00010), on 200,000 live refresh tokens and a few expired
// ones: the time per batch is logged, not asserted (the plan is
// TestGrowingTablePlansSQLite's), and the sweep must delete exactly the
// expired sessions on both schemas.
func TestTokenSweepAtScaleSQLite(t *testing.T) {
	ctx := context.Background()
	s := openSchemaAt(t, "sqlite", 9)
	now := time.Now().UTC().Truncate(time.Second)
	fill := func(prefix string, n int, expires time.Time) {
		t.Helper()
		err := s.DB().Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO token_sessions (kind, signature_hash, request_id, client_id, account_id, link_id, active, request, expires_at, created_at)
SELECT 'refresh_token', ? || i, ? || i, 'agent', 'acct', '', 1, x'7b7d', ?, ? FROM n`, n, prefix, prefix, expires, now).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	fill("live-", 200_000, now.Add(30*24*time.Hour))
	sweep := func(expired int) time.Duration {
		t.Helper()
		fill("spent-", expired, now.Add(-time.Hour))
		began := time.Now()
		const rounds = 20
		var removed int64
		for i := 0; i < rounds; i++ {
			n, err := s.SweepTokenSessions(ctx, store.KindRefreshToken, now, 500)
			if err != nil {
				t.Fatal(err)
			}
			removed += n
		}
		if removed != int64(expired) {
			t.Fatalf("swept %d sessions, want the %d expired ones", removed, expired)
		}
		return time.Since(began) / rounds
	}
	before := sweep(100)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	after := sweep(100)
	t.Logf("a refresh-token sweep batch over 200,000 live sessions: %v before the upgrade, %v after", before, after)
}
