package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// searchFill is the size of the catalog the search plan tests fill: 10,000
// searchable businesses in 50 cities, 2,000 of each kind ("Hair Studio
// 17", "Nail Studio 18", …), so that a kind, "studio", a one-letter word
// or a city matches thousands. bench/ grows the catalog to 100,000
// (PostgreSQL) and 20,000 (SQLite) and reports the times.
const searchFill = 10000

// fillBusinesses adds n searchable businesses through SQL and indexes them
// for search with BackfillSearch, as a bulk load would.
func fillBusinesses(t *testing.T, s *sqlstore.Store, n int) {
	t.Helper()
	now := time.Now().UTC()
	sqltest.FillFunc(t, s.DB(), func(tx *gorm.DB) error {
		return tx.Exec(`WITH RECURSIVE d(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM d WHERE i < ?)
INSERT INTO businesses (id, reference, name, category, city, time_zone, agent_booking, created_at, updated_at)
SELECT 'biz-fill-' || i, 'fill-' || i,
 CASE i % 5 WHEN 0 THEN 'Hair' WHEN 1 THEN 'Nail' WHEN 2 THEN 'Barber' WHEN 3 THEN 'Spa' ELSE 'Massage' END || ' Studio ' || i,
 'appointment', 'City ' || (i % 50), 'UTC', true, ?, ? FROM d`, n, now, now).Error
	})
	if got, err := s.BackfillSearch(context.Background()); err != nil || got != n {
		t.Fatalf("BackfillSearch indexed %d businesses (%v), want %d", got, err, n)
	}
}

// searchCases are the searches the plan tests replay: each must read about
// the page it returns, whatever the number of matches.
var searchCases = []struct {
	name string
	q    store.BusinessQuery
	want int // results on the page (Limit+1 read)
}{
	{"a kind: names that begin with it", store.BusinessQuery{Text: "hair", Limit: 10}, 11},
	{"a word inside the names", store.BusinessQuery{Text: "studio", Limit: 10}, 11},
	{"one letter", store.BusinessQuery{Text: "s", Limit: 10}, 11},
	{"two letters in a city", store.BusinessQuery{Text: "st", City: "City 7", Limit: 10}, 11},
	{"one letter in a city, second page", store.BusinessQuery{Text: "m", City: "city 9", Limit: 10, Offset: 10}, 11},
	{"a kind in a city", store.BusinessQuery{Text: "Massage", City: "City 9", Limit: 10}, 11},
	{"two common words", store.BusinessQuery{Text: "studio 12", Limit: 10}, 11},
	{"two words, one rare", store.BusinessQuery{Text: "studio 123", Limit: 10}, 11},
	{"a city alone", store.BusinessQuery{City: "City 3", Limit: 10}, 11},
	{"nothing", store.BusinessQuery{Text: "cafe", Limit: 10}, 0},
}

// TestSearchPlansAtScale: on PostgreSQL, with 10,000 never-analyzed
// businesses, every search's statements are replayed under EXPLAIN
// (ANALYZE, BUFFERS): the rows the scans read, filtered ones included,
// stay within three times the page (Limit+1 from the offset on), and the
// buffers within 120; a search of several words started from its rarest
// (fewer than 200 businesses) reads about those — where the trigram search before migration 00024
// ranked every match (2,000 for a kind, 10,000 for "studio" or "s").
func TestSearchPlansAtScale(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	for _, tbl := range []string{"businesses", "business_terms"} {
		if err := s.DB().Exec(`ALTER TABLE ` + tbl + ` SET (autovacuum_enabled = false)`).Error; err != nil {
			t.Fatal(err)
		}
	}
	fillBusinesses(t, s, searchFill)
	captured := sqltest.Capture(t, s.DB(), "business")
	for _, c := range searchCases {
		got, err := s.SearchBusinesses(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.want {
			t.Errorf("%s: %d results, want %d", c.name, len(got), c.want)
		}
		page := c.q.Offset + c.q.Limit + 1
		for _, st := range captured() {
			plan, raw, err := sqltest.Explain(ctx, s.SQL(), st.SQL, st.Vars...)
			if err != nil {
				t.Fatal(err)
			}
			read := scanned(plan)
			t.Logf("%s: %d rows read, %d buffers: %.140s", c.name, read, plan.Blocks(), strings.Join(strings.Fields(st.SQL), " "))
			rows, blocks := 3*page, 120
			switch {
			case strings.Contains(st.SQL, "count("):
				// a word's businesses counted up to 200 in the index
				// (never vacuumed, so each is checked in the table too)
				rows, blocks = 200, 250
			case strings.Contains(st.SQL, "MATERIALIZED"):
				// started from the rarest word, "123" (11 businesses):
				// each read with its first word's row, and sorted
				rows = 3 * 11
			case strings.Contains(st.SQL, "id IN"):
				rows = 11
			case c.q.Text == "studio 12":
				// both words common ("12" begins 111 numbers and a
				// city of 200): read in order until 11 have both
				rows, blocks = 10*page, 500
			}
			if read > rows || plan.Blocks() > blocks {
				t.Errorf("%s: read %d rows and %d buffers for a page of %d, want at most %d and %d:\n%s\n%s",
					c.name, read, plan.Blocks(), page, rows, blocks, st.SQL, raw)
			}
		}
	}
}

// scanned is the rows the scans under n returned or filtered out, over
// all their loops.
func scanned(n sqltest.PlanNode) int {
	total := 0
	if n.RelationName != "" {
		total += int((n.ActualRows + n.RowsRemovedByFilter + n.RowsRemovedByRechk) * max(n.ActualLoops, 1))
	}
	for _, c := range n.Plans {
		total += scanned(c)
	}
	return total
}

// TestSearchPlansAtScaleSQLite: the same searches on the embedded default,
// whose plans never depend on statistics (the product never runs
// ANALYZE): each statement searches an index on the query's term or on
// the folded name, city first when one is given, and never sorts
// (no "USE TEMP B-TREE FOR ORDER BY") nor scans a table.
func TestSearchPlansAtScaleSQLite(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	fillBusinesses(t, s, searchFill)
	captured := sqltest.Capture(t, s.DB(), "business")
	for _, c := range searchCases {
		got, err := s.SearchBusinesses(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.want {
			t.Errorf("%s: %d results, want %d", c.name, len(got), c.want)
		}
		for _, st := range captured() {
			plan, err := sqltest.QueryPlan(ctx, s.SQL(), st.SQL, st.Vars...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %q", c.name, plan)
			want := "USING INDEX businesses_search_name (search_name>? AND search_name<?)"
			if c.q.City != "" {
				want = "USING INDEX businesses_search_city (search_city=? AND search_name>? AND search_name<?)"
			}
			if strings.Contains(st.SQL, "id IN") {
				want = "USING INDEX sqlite_autoindex_businesses_1 (id=?)"
			}
			if strings.Contains(st.SQL, "business_terms") {
				want = "USING COVERING INDEX business_terms_term (term=?)"
				if c.q.City != "" {
					want = "USING COVERING INDEX business_terms_city (city_key=? AND term=?)"
				}
			}
			joined := strings.Join(plan, "\n")
			// Only a search started from its rarest word (fewer than
			// 200 businesses) sorts; a count scans its own subquery.
			sorts := strings.Contains(joined, "TEMP B-TREE") && !strings.Contains(st.SQL, "MATERIALIZED")
			scans := strings.Contains(strings.NewReplacer("SCAN m", "", "SCAN r", "").Replace(joined), "SCAN ")
			if !strings.Contains(joined, want) || sorts || scans {
				t.Errorf("%s: plan %q, want a search %s and no sort or scan", c.name, plan, want)
			}
		}
	}
}

// TestSearchRelevanceAtScale: with the filled catalog beside it, the
// ranking holds across the tiers and pages (docs/design.md, "Business
// search"), on both backends.
func TestSearchRelevanceAtScale(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		fillBusinesses(t, s, 500)
		refs := func(q store.BusinessQuery) string {
			t.Helper()
			got, err := s.SearchBusinesses(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, b := range got {
				out = append(out, b.Reference)
			}
			return strings.Join(out, " ")
		}
		// Names beginning with "hair studio 1" by folded name: 1, 10, 100…
		if got, want := refs(store.BusinessQuery{Text: "Hair Studio 1", Limit: 3}), "fill-10 fill-100 fill-105 fill-110"; got != want {
			t.Errorf("hair studio 1: %s, want %s", got, want)
		}
		// Page by page, "studio" lists every business once.
		seen := map[string]bool{}
		for off := 0; off < 600; off += 50 {
			got, err := s.SearchBusinesses(ctx, store.BusinessQuery{Text: "studio", Limit: 50, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range got {
				if i < 50 {
					if seen[b.Reference] {
						t.Fatalf("offset %d: %s again", off, b.Reference)
					}
					seen[b.Reference] = true
				}
			}
		}
		if len(seen) != 500 {
			t.Errorf("paging through studio found %d businesses, want 500", len(seen))
		}
	})
}
