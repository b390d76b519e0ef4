package authhttp_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// Token-path plans at scale. token_sessions is pre-filled with 500,000
// spent rows of every kind (one INSERT … SELECT generate_series), never
// analyzed (autovacuum is off for the table, and nothing runs ANALYZE), so
// the planner knows nothing about them. Then a code flow with PKCE and
// OpenID, two refresh rotations, a refresh-token reuse (the family is
// revoked), a code reuse, a revocation and the resource server's session
// check run through the real handlers, and every statement they send that
// touches token_sessions is replayed under EXPLAIN (ANALYZE, BUFFERS,
// FORMAT JSON) in a transaction that is rolled back, twice: with its
// arguments' values (a custom plan) and as PostgreSQL plans it for any
// values (a generic plan, which it may keep for a statement prepared
// through pgx's cache after five executions). Each must read at most
// maxPlanRows token_sessions rows (index entries and heap rows, filtered
// ones included) and at most maxPlanBlocks buffers: a plan that scans the
// spent rows fails, whatever the timing. Then the PKCE and OpenID rows are
// deleted, the table is analyzed with their index entries still in place,
// and a code flow's statements are checked again: statistics that say a
// kind is rare must not turn a lookup by key into a walk over that kind
// (migration 00017).
//
// LINKSLOT_PLAN_REPORT=1 logs the figures of every statement.
const (
	bulkRows      = 500_000
	maxPlanRows   = 20
	maxPlanBlocks = 200
)

func TestTokenPathPlansAtScale(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	db := s.DB()
	e := newEnv(t, s)
	began := time.Now()
	if err := testkit.FillSpentTokens(db, bulkRows, publicID, e.account2.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d spent rows in %s, not analyzed", bulkRows, time.Since(began).Round(time.Millisecond))

	captured := sqltest.Capture(t, db, "token_sessions")

	// The token path, through the real handlers.
	c := e.oauth(publicID, "", "openid", "offline_access")
	verifier := oauth2.GenerateVerifier()
	code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1234567890"))
	tok, err := c.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	first := tok.RefreshToken
	for range 2 {
		tok.Expiry = time.Now().Add(-time.Minute)
		if tok, err = c.TokenSource(ctx, tok).Token(); err != nil {
			t.Fatal(err)
		}
	}
	if st, m, _ := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first},
		"client_id": {publicID}}); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("refresh-token reuse: %d %v", st, m)
	}
	if st, m, _ := e.tokenForm("/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"code_verifier": {verifier}, "redirect_uri": {e.redirect}, "client_id": {publicID}}); st != 400 {
		t.Fatalf("code reuse: %d %v", st, m)
	}
	code2 := e.code(c, e.account.ID, oauth2.S256ChallengeOption(verifier))
	tok2, err := c.Exchange(ctx, code2, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if st, m, _ := e.tokenForm("/oauth2/revoke", url.Values{"token": {tok2.RefreshToken}, "client_id": {publicID}}); st != 200 {
		t.Fatalf("revoke: %d %v", st, m)
	}
	// The resource server's check of a token's session and link.
	if _, _, err := s.GetTokenSessionLink(ctx, store.KindAccessToken, store.HashSecret("no such token")); err == nil {
		t.Fatal("a made-up access token has a session")
	}

	stmts := captured()
	if len(stmts) < 5 {
		t.Fatalf("only %d token statements captured", len(stmts))
	}
	checkPlans(t, s.SQL(), "never analyzed", stmts)

	// The same after ANALYZE, with the PKCE and OpenID sessions of every
	// redeemed code deleted and not yet vacuumed, as the code exchange
	// leaves them between two autovacuum runs: the statistics now say
	// there are next to none of those kinds, while the indexes still hold
	// an entry for each. A plan that finds a code's companions by their
	// kind, instead of by their key, walks every dead entry (the
	// exchange's prefetch did: 1,400–1,700 buffers a call in make bench's
	// database after its rotations, a third of the code flow's rate).
	sqltest.Fill(t, db, `DELETE FROM token_sessions WHERE kind IN ('pkce', 'openid') AND expires_at < now()`)
	sqltest.Fill(t, db, `ANALYZE token_sessions`)

	captured() // the fixture's own statements
	code3 := e.code(c, e.account.ID, oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-0987654321"))
	if _, err := c.Exchange(ctx, code3, oauth2.VerifierOption(verifier)); err != nil {
		t.Fatal(err)
	}
	checkPlans(t, s.SQL(), "analyzed, with dead PKCE and OpenID entries", captured())
}

// checkPlans replays each distinct statement of stmts with its custom and
// its generic plan (explain) and fails any that reads more than
// maxPlanRows token_sessions rows or maxPlanBlocks buffers.
func checkPlans(t *testing.T, db *sql.DB, phase string, stmts []sqltest.Statement) {
	t.Helper()
	ctx := context.Background()
	seen := map[string]bool{}
	report := os.Getenv("LINKSLOT_PLAN_REPORT") == "1"
	for _, st := range stmts {
		if seen[st.SQL] {
			continue
		}
		seen[st.SQL] = true
		for _, generic := range []bool{false, true} {
			rows, blocks, nodes, err := explain(ctx, db, st, generic)
			if err != nil {
				t.Fatalf("%s: EXPLAIN %s (generic plan: %v): %v", phase, shorten(st.SQL), generic, err)
			}
			if report {
				t.Logf("%s: rows %4d  blocks %4d  generic %-5v  %s\n    plan: %s", phase, rows, blocks, generic, shorten(st.SQL), nodes)
			}
			if rows > maxPlanRows || blocks > maxPlanBlocks {
				t.Errorf("%s: plan (generic: %v) reads %d token_sessions rows and %d buffers (at most %d and %d) at %d spent rows:\n  %s\n  plan: %s",
					phase, generic, rows, blocks, maxPlanRows, maxPlanBlocks, bulkRows, shorten(st.SQL), nodes)
			}
		}
	}
	t.Logf("%s: %d distinct token statements checked", phase, len(seen))
}

// explain replays st under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) in a
// transaction it rolls back, and returns the token_sessions rows read, the
// buffers the statement touched, and the plan in one line. With generic,
// the plan is the one PostgreSQL makes for the statement's parameters
// without their values (plan_cache_mode = force_generic_plan on a
// PREPAREd copy): the server sends every statement through pgx's cache of
// prepared statements, and after five executions PostgreSQL may keep a
// generic plan, so that plan must hold at scale too.
func explain(ctx context.Context, db *sql.DB, st sqltest.Statement, generic bool) (rows, blocks int, nodes string, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, "", err
	}
	defer tx.Rollback()
	query, args := st.SQL, st.Vars
	if generic {
		lits := make([]string, len(args))
		for i, a := range args {
			if lits[i], err = literal(a); err != nil {
				return 0, 0, "", err
			}
		}
		if _, err := tx.ExecContext(ctx, "PREPARE plan_check AS "+st.SQL); err != nil {
			return 0, 0, "", err
		}
		// A prepared statement belongs to the connection, not to the
		// transaction.
		defer tx.ExecContext(context.WithoutCancel(ctx), "DEALLOCATE plan_check")
		if _, err := tx.ExecContext(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
			return 0, 0, "", err
		}
		query, args = "EXECUTE plan_check("+strings.Join(lits, ", ")+")", nil
	}
	if strings.Contains(st.SQL, "INSERT") {
		// The rows it inserts exist now: remove the live ones (the
		// spent rows have all expired) so that the replay inserts again.
		// Index entries of the removed rows stay, so lookups walk the
		// same paths.
		if _, err := tx.ExecContext(ctx, `DELETE FROM token_sessions WHERE expires_at > now()`); err != nil {
			return 0, 0, "", err
		}
	}
	root, _, err := sqltest.Explain(ctx, tx, query, args...)
	if err != nil {
		return 0, 0, "", err
	}
	var parts []string
	var walk func(n sqltest.PlanNode)
	walk = func(n sqltest.PlanNode) {
		label := n.NodeType
		if n.IndexName != "" {
			label += " " + n.IndexName
		} else if n.RelationName != "" {
			label += " " + n.RelationName
		}
		// A ModifyTable node counts the rows it changed, which its
		// scan below has already counted.
		if n.NodeType != "ModifyTable" && (strings.HasPrefix(n.IndexName, "token_sessions") || n.RelationName == "token_sessions") {
			r := int(n.ActualRows*max(n.ActualLoops, 1) + n.RowsRemovedByFilter + n.RowsRemovedByRechk)
			rows += r
			label += fmt.Sprintf(" (%d)", r)
		}
		parts = append(parts, label)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root)
	return rows, root.Blocks(), strings.Join(parts, " → "), nil
}

// literal writes a statement argument as an SQL literal for EXECUTE.
func literal(v any) (string, error) {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case string:
		return quote(v), nil
	case []byte:
		return quote(`\x` + hex.EncodeToString(v)), nil
	case bool:
		return fmt.Sprint(v), nil
	case int, int32, int64:
		return fmt.Sprint(v), nil
	case time.Time:
		return quote(v.Format(time.RFC3339Nano)), nil
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = quote(s)
		}
		return strings.Join(parts, ", "), nil
	}
	return "", fmt.Errorf("no SQL literal for an argument of type %T", v)
}

func shorten(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 240 {
		q = q[:240] + "…"
	}
	return q
}
