package sqlstore_test

import (
	"context"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestOutboxGaugeAtScale: the outbox gauges' count reads the undelivered
// messages only. outbox_messages holds 300,000 delivered messages (30 days
// of a busy deployment's e-mails and webhooks, which the retention keeps)
// that nothing has analyzed, and seven undelivered ones; the count is
// right, and EXPLAIN (ANALYZE, BUFFERS) of it touches a handful of buffers
// where counting every status read the whole table. So does the delivery
// log's first page, unfiltered or by channel. Buffers, not timings.
func TestOutboxGaugeAtScale(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	db := s.DB()
	sqltest.Fill(t, db,
		`ALTER TABLE outbox_messages SET (autovacuum_enabled = false)`,
		`INSERT INTO outbox_messages (id, channel, topic, recipient, payload, status, attempts, next_attempt_at, created_at, updated_at, delivered_at)
SELECT 'msg-' || i, (ARRAY['email', 'webhook'])[1 + i % 2], 'booking.created', 'p' || i || '@example.com', '\x7b7d'::bytea,
 'delivered', 1, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
FROM generate_series(1, 300000) AS i`,
		`INSERT INTO outbox_messages (id, channel, topic, payload, status, next_attempt_at, created_at, updated_at)
SELECT 'owed-' || i, (ARRAY['email', 'webhook'])[1 + i % 2], 'booking.created', '\x7b7d'::bytea,
 (ARRAY['queued', 'failed'])[1 + i % 3 / 2], now(), now(), now()
FROM generate_series(1, 7) AS i`)
	var want []store.OutboxCount
	if err := db.Raw(`SELECT channel, status, count(*) AS n FROM outbox_messages WHERE status <> 'delivered'
GROUP BY channel, status ORDER BY channel, status`).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	// The statement CountUndelivered sends, captured to be explained.
	captured := sqltest.Capture(t, db, "outbox_messages")
	got, err := s.CountUndelivered(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotN, wantN := map[string]int64{}, map[string]int64{}
	var total int64
	for _, c := range got {
		gotN[c.Channel+"/"+c.Status] = c.N
	}
	for _, c := range want {
		wantN[c.Channel+"/"+c.Status] = c.N
		total += c.N
	}
	if total != 7 || len(gotN) != len(wantN) {
		t.Fatalf("CountUndelivered = %v, want %v", gotN, wantN)
	}
	for k, n := range wantN {
		if gotN[k] != n {
			t.Fatalf("CountUndelivered = %v, want %v", gotN, wantN)
		}
	}

	stmts := captured()
	if len(stmts) != 1 {
		t.Fatalf("CountUndelivered sent %d statements on outbox_messages, want 1", len(stmts))
	}
	sqlDB := s.SQL()
	plan, raw, err := sqltest.Explain(ctx, sqlDB, stmts[0].SQL, stmts[0].Vars...)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Blocks() > 50 {
		t.Errorf("the gauges' count read %d buffers over 300,000 delivered messages, want at most 50:\n%s", plan.Blocks(), raw)
	}
	all, _, err := sqltest.Explain(ctx, sqlDB, `SELECT channel, status, count(*) AS n FROM outbox_messages GROUP BY channel, status`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the gauges' count read %d buffers; counting every status reads %d", plan.Blocks(), all.Blocks())

	// The delivery log's first page, unfiltered and by channel, newest
	// first: read in index order, not sorted from the whole table.
	for _, f := range []store.OutboxFilter{{}, {Channel: store.ChannelWebhook}} {
		page, err := s.ListMessages(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 100 {
			t.Fatalf("delivery log %+v: %d messages, want a page of 100", f, len(page))
		}
		stmts := captured()
		if len(stmts) != 1 {
			t.Fatalf("ListMessages sent %d statements, want 1", len(stmts))
		}
		plan, raw, err := sqltest.Explain(ctx, sqlDB, stmts[0].SQL, stmts[0].Vars...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("delivery log %+v: %d buffers", f, plan.Blocks())
		if plan.Blocks() > 50 {
			t.Errorf("delivery log %+v read %d buffers over 300,000 messages, want at most 50:\n%s", f, plan.Blocks(), raw)
		}
	}
}
