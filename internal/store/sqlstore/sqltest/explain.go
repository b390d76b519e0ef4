package sqltest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// PlanNode is the part of one node of PostgreSQL's EXPLAIN (ANALYZE,
// BUFFERS, FORMAT JSON) that the plan tests read.
type PlanNode struct {
	NodeType            string     `json:"Node Type"`
	RelationName        string     `json:"Relation Name"`
	IndexName           string     `json:"Index Name"`
	ActualRows          float64    `json:"Actual Rows"`
	ActualLoops         float64    `json:"Actual Loops"`
	RowsRemovedByFilter float64    `json:"Rows Removed by Filter"`
	RowsRemovedByRechk  float64    `json:"Rows Removed by Index Recheck"`
	SharedHitBlocks     int        `json:"Shared Hit Blocks"`
	SharedReadBlocks    int        `json:"Shared Read Blocks"`
	Plans               []PlanNode `json:"Plans"`
}

// Blocks is the shared buffers the node and those below it touched.
func (n PlanNode) Blocks() int { return n.SharedHitBlocks + n.SharedReadBlocks }

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Explain runs query under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) on db
// and returns the plan's root node and the raw plan. The statement runs:
// explain a write inside a transaction that is rolled back.
func Explain(ctx context.Context, db Querier, query string, args ...any) (PlanNode, []byte, error) {
	var raw []byte
	if err := db.QueryRowContext(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+query, args...).Scan(&raw); err != nil {
		return PlanNode{}, nil, err
	}
	var out []struct {
		Plan PlanNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		return PlanNode{}, raw, fmt.Errorf("EXPLAIN output: %v", err)
	}
	return out[0].Plan, raw, nil
}

// QueryPlan is SQLite's EXPLAIN QUERY PLAN of query: one line per step
// ("SEARCH t USING INDEX i (a=? AND b>?)", "SCAN t", "USE TEMP B-TREE FOR
// ORDER BY"). SQLite reports no buffers; which index a search uses, and on
// which columns, is what its plan tests read. The product never runs
// ANALYZE, so the plan of an empty database is the plan of a full one.
func QueryPlan(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// Statement is one SQL statement gorm sent, with its arguments.
type Statement struct {
	SQL  string
	Vars []any
}

// Capture records, from now on, every statement gorm sends on db that
// succeeds and mentions table; the function it returns hands over what was
// recorded so far and starts afresh. For replaying the statements of a real
// path under Explain.
func Capture(t testing.TB, db *gorm.DB, table string) func() []Statement {
	t.Helper()
	var mu sync.Mutex
	var got []Statement
	record := func(tx *gorm.DB) {
		q := tx.Statement.SQL.String()
		if tx.Error != nil || !strings.Contains(q, table) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, Statement{q, slices.Clone(tx.Statement.Vars)})
	}
	cb := db.Callback()
	name := "sqltest:capture:" + table + ":" + store.RandomString(4)
	for _, err := range []error{
		cb.Query().After("gorm:query").Register(name, record), cb.Row().After("gorm:row").Register(name, record),
		cb.Raw().After("gorm:raw").Register(name, record), cb.Update().After("gorm:update").Register(name, record),
		cb.Delete().After("gorm:delete").Register(name, record), cb.Create().After("gorm:create").Register(name, record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return func() []Statement {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}
