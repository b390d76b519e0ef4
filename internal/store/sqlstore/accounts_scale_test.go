package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestAccountSearchAtScale: the administrators' account search among
// 200,000 accounts on PostgreSQL, never analyzed, across the upgrade that
// gives it a trigram index (migration 00016). The answers are the same on
// both sides, for a rare text, a common one and a text too short for
// trigrams; after the upgrade a rare text is found through
// accounts_email_trgm, touching a tenth of the buffers or less of the
// search that read every account (the index's posting lists for trigrams
// every address here shares, "use" and "ser", are what it reads).
// Buffers, not timings.
func TestAccountSearchAtScale(t *testing.T) {
	ctx := context.Background()
	s := openSchemaAt(t, "postgres", 15)
	db := s.DB()
	sqltest.Fill(t, db, `INSERT INTO accounts (id, email, password_hash, created_at, updated_at)
SELECT 'acct-' || i, 'user' || i || '@example' || (i % 7) || '.com', '', now(), now() FROM generate_series(1, 200000) AS i`)
	queries := []struct {
		text string
		want int // answers, at most the page of 50 + 1
	}{{"user123456@", 1}, {"example3.com", 51}, {"r9", 51}, {"nobody", 0}}
	var scan int // the buffers of the search before the upgrade
	search := func(when string) (blocks int) {
		t.Helper()
		for _, q := range queries {
			captured := sqltest.Capture(t, db, "accounts")
			got, err := s.SearchAccounts(ctx, store.AccountQuery{Text: q.text, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != q.want {
				t.Fatalf("%s: %q: %d accounts, want %d", when, q.text, len(got), q.want)
			}
			for _, a := range got {
				if !strings.Contains(a.Email, q.text) {
					t.Fatalf("%s: %q found %s", when, q.text, a.Email)
				}
			}
			if q.text != "user123456@" && q.text != "nobody" {
				continue
			}
			stmts := captured()
			plan, raw, err := sqltest.Explain(ctx, s.SQL(), stmts[0].SQL, stmts[0].Vars...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %q: %d buffers", when, q.text, plan.Blocks())
			if when == "after the upgrade" && (plan.Blocks()*10 > scan || !strings.Contains(string(raw), "accounts_email_trgm")) {
				t.Errorf("%q read %d buffers among 200,000 accounts, want a tenth of the %d of a scan, through accounts_email_trgm:\n%s", q.text, plan.Blocks(), scan, raw)
			}
			blocks = max(blocks, plan.Blocks())
		}
		return blocks
	}
	before := search("before the upgrade")
	scan = before
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	after := search("after the upgrade")
	t.Logf("postgres, 200,000 accounts: a rare text's search touched %d buffers before the upgrade, %d after", before, after)
}
