package sqltest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
