package sqlstore

import "testing"

// TestWrites holds the gate's reading of a statement outside a
// transaction: only what begins with SELECT or EXPLAIN, after blanks and
// comments, is a read; anything else takes the write gate.
func TestWrites(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                                    false,
		"  select * from accounts":                    false,
		"\n\t-- a comment\nSELECT 1":                  false,
		"/* a comment */ EXPLAIN QUERY PLAN SELECT 1": false,
		"Select(1)":                                   false,
		"INSERT INTO accounts VALUES (1)":             true,
		"insert into x select * from y":               true,
		"UPDATE accounts SET email = ''":              true,
		"DELETE FROM token_sessions":                  true,
		"REPLACE INTO x VALUES (1)":                   true,
		"WITH d AS (DELETE FROM x) SELECT 1":          true,
		"PRAGMA wal_checkpoint(TRUNCATE)":             true,
		"CREATE TABLE x (a)":                          true,
		"SELECTED":                                    true,
		"-- only a comment":                           false,
		"/* unterminated":                             false,
		"":                                            true,
	} {
		if got := writes(q); got != want {
			t.Errorf("writes(%q) = %v, want %v", q, got, want)
		}
	}
}
