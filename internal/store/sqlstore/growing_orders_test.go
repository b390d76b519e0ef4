package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestGrowingTableOrders: four reads of tables that only grow, or keep 30
// days, across the upgrade that gives each an index matching its whole
// condition and order (migration 00015), on PostgreSQL with nothing
// analyzed. The outbox gauges' count of undelivered messages among
// 100,000 failed webhooks; the delivery log's page of failed e-mails (the
// replay queue) among them and 200,000 delivered messages; a staff
// member's calendar feed in a business of 20 staff members with 4,100
// bookings each; the audit log's page of one event among 200,000. After
// the upgrade none of them scans its table or finds rows through an index
// that it then throws away; before it, the e-mails page found 200,020
// index entries for its 10 messages and the feed 20,480 for its 819
// bookings. (PostgreSQL already served the gauge and the audit page
// exactly: what the migration changes for them is SQLite's plan, which
// TestGrowingTablePlansSQLite holds.) The answers are checked on both
// sides. Plans, not timings.
func TestGrowingTableOrders(t *testing.T) {
	ctx := context.Background()
	s := openSchemaAt(t, "postgres", 14)
	db := s.DB()
	c := store.Catalog{
		Business: store.Business{Reference: "salon", Name: "Salon", Category: store.CategoryAppointment, TimeZone: "UTC", AgentBooking: true, Currency: "EUR"},
		Services: []store.Service{{Reference: "cut", Name: "Cut", DurationMinutes: 30, Currency: "EUR"}},
	}
	for i := range 20 {
		c.Staff = append(c.Staff, store.Staff{Reference: fmt.Sprint("s", i), Name: fmt.Sprint("Staff ", i), ServiceIDs: []string{"cut"}})
	}
	addColumns22(t, s)
	saved, err := s.PutCatalog(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	sqltest.Fill(t, db,
		`ALTER TABLE outbox_messages SET (autovacuum_enabled = false)`,
		`ALTER TABLE bookings SET (autovacuum_enabled = false)`,
		`ALTER TABLE audit_events SET (autovacuum_enabled = false)`,
		// 30 days of delivered messages, 100,000 failed webhooks of a
		// dead endpoint, and 10 failed e-mails.
		`INSERT INTO outbox_messages (id, channel, topic, payload, status, attempts, next_attempt_at, created_at, updated_at)
SELECT 'msg-' || i, CASE WHEN i <= 200000 THEN (ARRAY['email', 'webhook'])[1 + i % 2] WHEN i <= 300000 THEN 'webhook' ELSE 'email' END,
 'booking.created', '\x7b7d'::bytea, CASE WHEN i <= 200000 THEN 'delivered' ELSE 'failed' END, 1,
 now(), now() - (300010 - i) * interval '8 seconds', now()
FROM generate_series(1, 300010) AS i`,
		// 4,100 bookings an hour apart for each staff member, from 170 days
		// ago to 100 hours ahead.
		fmt.Sprintf(`INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end,
 status, version, payment_state, created_at, updated_at)
SELECT 'bkg-' || st.reference || '-' || d.i, 'LS-' || st.reference || '-' || d.i, st.business_id, '%s', st.id,
 now() + (100 - d.i) * interval '1 hour', now() + (100 - d.i) * interval '1 hour' + interval '30 minutes',
 now() + (100 - d.i) * interval '1 hour', now() + (100 - d.i) * interval '1 hour' + interval '30 minutes',
 CASE WHEN d.i <= 100 THEN 'confirmed' ELSE 'completed' END, 1, 'none', now(), now()
FROM staff AS st CROSS JOIN generate_series(1, 4100) AS d(i)
WHERE st.business_id = '%s'`, saved.Services[0].ID, saved.Business.ID),
		`INSERT INTO audit_events (id, actor_id, action, target, before, after, request_id, client_addr, created_at)
SELECT 'aud-' || i, 'acct_admin', 'client.update', 'cli', '', '', '', '', now() - (200000 - i) * interval '1 second'
FROM generate_series(1, 200000) AS i`)
	staff := saved.Staff[7].ID
	since := time.Now().Add(-30*24*time.Hour + 30*time.Minute) // 720 hours back and 100 ahead: 819 bookings
	reads := []struct {
		name  string
		table string
		run   func() (int, error) // returns how many it answered
		want  int
	}{
		{"the outbox gauges' count", "outbox_messages", func() (int, error) {
			counts, err := s.CountUndelivered(ctx)
			n := 0
			for _, c := range counts {
				n += int(c.N)
			}
			return n, err
		}, 100010},
		{"the failed e-mails page", "outbox_messages", func() (int, error) {
			m, err := s.ListMessages(ctx, store.OutboxFilter{Status: store.OutboxFailed, Channel: store.ChannelEmail, Limit: 20})
			return len(m), err
		}, 10},
		{"a staff member's feed", "bookings", func() (int, error) {
			b, err := s.ListFeedBookings(ctx, store.FeedBookingFilter{BusinessID: saved.Business.ID, StaffID: staff, Since: since, Limit: 2000})
			for _, x := range b {
				if x.StaffID != staff {
					return 0, fmt.Errorf("booking %s of staff %s in the feed of %s", x.ID, x.StaffID, staff)
				}
			}
			return len(b), err
		}, 819},
		{"the audit log's page of one", "audit_events", func() (int, error) {
			e, err := s.ListAuditEvents(ctx, 1, 0)
			if err == nil && len(e) > 0 && e[0].ID != "aud-200000" {
				return 0, fmt.Errorf("newest event %s, want aud-200000", e[0].ID)
			}
			return len(e), err
		}, 2},
	}
	// explain runs each read, checks its answer, and replays its statement
	// under EXPLAIN (ANALYZE, BUFFERS); it returns, per read, what the plan
	// did that it should not have (nothing, after the upgrade).
	explain := func(when string) []string {
		t.Helper()
		var faults []string
		for _, r := range reads {
			captured := sqltest.Capture(t, db, r.table)
			n, err := r.run()
			if err != nil {
				t.Fatalf("%s, %s: %v", when, r.name, err)
			}
			if n != r.want {
				t.Fatalf("%s, %s: %d answered, want %d", when, r.name, n, r.want)
			}
			stmts := captured()
			if len(stmts) != 1 {
				t.Fatalf("%s, %s: %d statements, want 1", when, r.name, len(stmts))
			}
			plan, raw, err := sqltest.Explain(ctx, s.SQL(), stmts[0].SQL, stmts[0].Vars...)
			if os.Getenv("LINKSLOT_PLAN_REPORT") != "" {
				t.Logf("%s, %s:\n%s", when, r.name, raw)
			}
			if err != nil {
				t.Fatal(err)
			}
			// read is every row the plan's scans found, kept or not: a read
			// that matches its index finds what it answers (the audit page
			// finds one more to see a tie ends, the gauge every undelivered
			// message it counts).
			var read float64
			var bad []string
			var walk func(n sqltest.PlanNode)
			walk = func(n sqltest.PlanNode) {
				switch n.NodeType {
				case "Seq Scan":
					bad = append(bad, "Seq Scan "+n.RelationName)
				case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
					read += (n.ActualRows + n.RowsRemovedByFilter) * max(n.ActualLoops, 1)
				}
				for _, c := range n.Plans {
					walk(c)
				}
			}
			walk(plan)
			if read > float64(n+n/10+2) {
				bad = append(bad, fmt.Sprintf("its index scans found %.0f rows to answer %d", read, n))
			}
			line := fmt.Sprintf("%s: %d buffers", r.name, plan.Blocks())
			if len(bad) > 0 {
				line += " (" + strings.Join(bad, "; ") + ")"
			}
			t.Logf("%s: %s", when, line)
			if len(bad) > 0 {
				faults = append(faults, line)
			}
		}
		return faults
	}
	before := explain("before the upgrade")
	dropColumns22(t, s)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if after := explain("after the upgrade"); len(after) > 0 {
		t.Errorf("after the upgrade, reads that read more than they answer:\n  %s", strings.Join(after, "\n  "))
	}
	if len(before) == 0 {
		t.Errorf("before the upgrade every read was already exact; the test no longer shows what migration 00015 is for")
	}
}

// TestGrowingTableOrdersSQLite times the same four reads on SQLite, the
// embedded default, across the same upgrade: 300,000 delivered e-mails,
// 100,000 failed webhooks and 50 failed e-mails; 200,000 audit events;
// 100,000 bookings of 20 staff members over 90 days. The times are
// logged, not asserted (TestGrowingTablePlansSQLite holds the plans), and
// each read answers the same on both sides.
func TestGrowingTableOrdersSQLite(t *testing.T) {
	ctx := context.Background()
	s := openSchemaAt(t, "sqlite", 14)
	db := s.DB()
	now := time.Now().UTC().Truncate(time.Second)
	at := now.Format("2006-01-02 15:04:05")
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO outbox_messages (id, channel, topic, recipient, payload, status, attempts, next_attempt_at, created_at, updated_at)
SELECT 'd' || i, 'email', 'booking.created', 'x@example.com', x'7b7d', 'delivered', 1, @at, datetime(@at, '-' || (i * 8) || ' seconds'), @at FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO outbox_messages (id, channel, topic, recipient, payload, status, attempts, next_attempt_at, created_at, updated_at)
SELECT 'f' || i, 'webhook', 'booking.created', '', x'7b7d', 'failed', 8, @at, datetime(@at, '-' || (i * 8) || ' seconds'), @at FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
INSERT INTO outbox_messages (id, channel, topic, recipient, payload, status, attempts, next_attempt_at, created_at, updated_at)
SELECT 'fe' || i, 'email', 'account.verify', 'y@example.com', x'7b7d', 'failed', 8, @at, datetime(@at, '-' || (i * 86400) || ' seconds'), @at FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO audit_events (id, actor_id, action, target, created_at) SELECT 'a' || i, 'adm', 'client.update', 'cli', datetime(@at, '-' || i || ' seconds') FROM n`,
		`INSERT INTO businesses (id, reference, name, category, time_zone, created_at, updated_at) VALUES ('biz', 'biz', 'Biz', 'appointment', 'UTC', @at, @at)`,
		`INSERT INTO services (id, business_id, reference, name, duration_minutes, currency) VALUES ('svc', 'biz', 'svc', 'Cut', 30, 'EUR')`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19)
INSERT INTO staff (id, business_id, reference, name) SELECT 'st' || i, 'biz', 'st' || i, 'Staff' FROM n`,
		// One every 78 seconds of the business's 90 days, -30 to +60, in
		// turn among the staff members.
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO bookings (id, reference, business_id, service_id, staff_id, starts_at, ends_at, block_start, block_end, status, created_at, updated_at)
SELECT 'bk' || i, 'LS-' || i, 'biz', 'svc', 'st' || (i % 20),
 datetime(@at, (i * 78 - 2592000) || ' seconds'), datetime(@at, (i * 78 - 2592000 + 1800) || ' seconds'),
 datetime(@at, (i * 78 - 2592000) || ' seconds'), datetime(@at, (i * 78 - 2592000 + 1800) || ' seconds'),
 CASE WHEN i * 78 < 2592000 THEN 'completed' ELSE 'confirmed' END, @at, @at FROM n`,
	} {
		var args []any
		if strings.Contains(q, "@at") {
			args = append(args, map[string]any{"at": at})
		}
		if err := db.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	reads := []struct {
		name string
		run  func() (int, error)
	}{
		{"the outbox gauges' count", func() (int, error) {
			counts, err := s.CountUndelivered(ctx)
			n := 0
			for _, c := range counts {
				n += int(c.N)
			}
			return n, err
		}},
		{"the failed e-mails page of 100", func() (int, error) {
			m, err := s.ListMessages(ctx, store.OutboxFilter{Status: store.OutboxFailed, Channel: store.ChannelEmail, Limit: 100})
			return len(m), err
		}},
		{"the audit log's page of one", func() (int, error) {
			e, err := s.ListAuditEvents(ctx, 1, 0)
			return len(e), err
		}},
		{"a staff member's feed", func() (int, error) {
			b, err := s.ListFeedBookings(ctx, store.FeedBookingFilter{BusinessID: "biz", StaffID: "st3", Since: now.Add(-30 * 24 * time.Hour), Limit: 2000})
			return len(b), err
		}},
	}
	// measure returns, per read, its answer's size and its median time of
	// five.
	measure := func() (sizes []int, times []time.Duration) {
		t.Helper()
		for _, r := range reads {
			var took []time.Duration
			var n int
			for range 5 {
				began := time.Now()
				got, err := r.run()
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				took = append(took, time.Since(began))
				n = got
			}
			slices.Sort(took)
			sizes, times = append(sizes, n), append(times, took[2])
		}
		return sizes, times
	}
	oldSizes, oldTimes := measure()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	newSizes, newTimes := measure()
	for i, r := range reads {
		if oldSizes[i] != newSizes[i] || newSizes[i] == 0 {
			t.Errorf("%s answered %d before the upgrade and %d after", r.name, oldSizes[i], newSizes[i])
		}
		t.Logf("sqlite: %s (%d answered), median of 5: %v before the upgrade, %v after", r.name, newSizes[i], oldTimes[i], newTimes[i])
	}
}
