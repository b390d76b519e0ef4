package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// foreignKey is one foreign key of the schema: the referring table, its
// columns, and the table they refer to.
type foreignKey struct {
	table, refers string
	columns       []string
}

func (fk foreignKey) String() string {
	return fmt.Sprintf("%s(%s) → %s", fk.table, strings.Join(fk.columns, ", "), fk.refers)
}

// TestForeignKeysIndexed: every foreign key's referring rows are found
// through an index (migration 00013). Deleting a business's staff member
// or service (a catalog import), a client, an account or a business makes
// PostgreSQL look for the rows that refer to it; without an index that
// starts with the key's columns that search reads the whole referring
// table — for bookings, every booking ever made — inside the deleting
// transaction. Read from the catalog, so the answer does not depend on the
// tables' size or statistics. A partial index serves a key only when its
// condition is the key column's IS NOT NULL, which every search by the
// key implies.
func TestForeignKeysIndexed(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	rows, err := s.SQL().QueryContext(ctx, `SELECT c.conrelid::regclass::text, c.confrelid::regclass::text,
 (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
 EXISTS (SELECT 1 FROM pg_index i
  WHERE i.indrelid = c.conrelid AND i.indisvalid
   AND (SELECT array_agg(x ORDER BY x) FROM unnest((i.indkey::int2[])[0:cardinality(c.conkey) - 1]) AS x)
     = (SELECT array_agg(x ORDER BY x) FROM unnest(c.conkey) AS x)
   AND (i.indpred IS NULL OR pg_get_expr(i.indpred, i.indrelid) =
     (SELECT format('(%s IS NOT NULL)', a.attname) FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1])))
FROM pg_constraint c
WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
ORDER BY 1, 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var fk foreignKey
		var cols string
		var served bool
		if err := rows.Scan(&fk.table, &fk.refers, &cols, &served); err != nil {
			t.Fatal(err)
		}
		fk.columns = strings.Split(cols, ",")
		n++
		if !served {
			t.Errorf("%v: no index starts with the key's columns, so a delete from %s reads all of %s", fk, fk.refers, fk.table)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("found %d foreign keys, want the schema's (at least 20)", n)
	}
}

// TestForeignKeysIndexedSQLite is TestForeignKeysIndexed on the embedded
// default, asked of SQLite's planner: its foreign-key actions and checks
// search the referring table by the key's columns, and without an index
// they read all of it while holding the write lock. The product never runs
// ANALYZE on SQLite, so the plan of this empty database is the plan of a
// full one.
func TestForeignKeysIndexedSQLite(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	db := s.SQL()
	rows, err := db.QueryContext(ctx, `SELECT m.name, f."table", group_concat(f."from" || ' = ?', ' AND ')
FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
WHERE m.type = 'table'
GROUP BY m.name, f.id
ORDER BY 1, 3`)
	if err != nil {
		t.Fatal(err)
	}
	type search struct{ table, refers, where string }
	var searches []search
	for rows.Next() {
		var q search
		if err := rows.Scan(&q.table, &q.refers, &q.where); err != nil {
			t.Fatal(err)
		}
		searches = append(searches, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(searches) < 20 {
		t.Fatalf("found %d foreign keys, want the schema's (at least 20)", len(searches))
	}
	for _, q := range searches {
		sel := "SELECT 1 FROM " + q.table + " WHERE " + q.where
		args := make([]any, strings.Count(q.where, "?"))
		for i := range args {
			args[i] = "x"
		}
		plan, err := sqltest.QueryPlan(ctx, db, sel, args...)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") {
				t.Errorf("%s → %s: no index serves %q, so a delete from %s reads all of %s: %q", q.table, q.refers, sel, q.refers, q.table, plan)
			}
		}
	}
}
