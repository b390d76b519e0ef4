package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// removalFixture is one person linked to one client, with sessions on the
// link and one on no link, and a passkey ceremony of theirs: what an
// erasure or a client deletion has to find among everyone else's.
type removalFixture struct {
	account, client, link string
	sessions              []store.TokenSession
}

func newRemovalFixture(t testing.TB, s *sqlstore.Store, name string, now time.Time) removalFixture {
	t.Helper()
	ctx := context.Background()
	f := removalFixture{account: "acct-" + name, client: "agent-" + name}
	if err := s.CreateAccount(ctx, store.Account{ID: f.account, Email: name + "@example.com", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	// Inserted by the columns of migration 00013's clients table, since
	// the fixture is made before the upgrade as well as after it (a
	// store.Client written by CreateClient has the columns of today).
	if err := s.DB().Exec(`INSERT INTO clients (id, name, secret_hash, public, redirect_uris, allowed_scopes, default_scopes, grant_types,
 logo_url, contact, disabled, pinned_document, open_linked, jwks_uri, created_at, updated_at)
VALUES (?, 'Agent', '', TRUE, '["http://127.0.0.1/cb"]', '["openid"]', '[]', '["authorization_code","refresh_token"]', '', '', FALSE, '', FALSE, '', ?, ?)`,
		f.client, now, now).Error; err != nil {
		t.Fatal(err)
	}
	l, err := s.UpsertLink(ctx, f.account, f.client, []string{"openid"}, now)
	if err != nil {
		t.Fatal(err)
	}
	f.link = l.ID
	for i, kind := range []store.TokenKind{store.KindAccessToken, store.KindRefreshToken, store.KindAuthorizeCode} {
		ts := store.TokenSession{Kind: kind, SignatureHash: fmt.Sprint(name, "-", i), RequestID: "req-" + name, ClientID: f.client,
			AccountID: f.account, LinkID: f.link, Active: true, Request: []byte("{}"), ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		if kind == store.KindAuthorizeCode {
			ts.LinkID = "" // a session on no link
		}
		if err := s.CreateTokenSession(ctx, ts); err != nil {
			t.Fatal(err)
		}
		f.sessions = append(f.sessions, ts)
	}
	if err := s.CreateWebAuthnCeremony(ctx, store.WebAuthnCeremony{IDHash: "cer-" + name, AccountID: f.account, Purpose: "register",
		Data: []byte("{}"), ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRemovalPlans holds every statement of an account's erasure and of
// a client's deletion to index searches on SQLite, the embedded default:
// both run in one transaction holding SQLite's write lock, and the token
// sessions they look for are a few among every live token and an hour of
// spent ones. The product never runs ANALYZE on SQLite, so the plan of
// this small database is the plan of a large one; TestRemovalAtScale
// shows it with the rows, on both backends.
func TestRemovalPlans(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	now := time.Now().UTC()
	person := newRemovalFixture(t, s, "leaving", now)
	client := newRemovalFixture(t, s, "retired", now)
	captured := sqltest.Capture(t, s.DB(), "") // every statement
	if err := s.EraseAccount(ctx, person.account, now); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteClient(ctx, client.client); err != nil {
		t.Fatal(err)
	}
	indexes := []string{"token_sessions_link", "token_sessions_unlinked_account", "token_sessions_unlinked_client", "webauthn_ceremonies_account"}
	used := map[string]bool{}
	checked := 0
	for _, st := range captured() {
		q := strings.Join(strings.Fields(st.SQL), " ")
		plan, err := sqltest.QueryPlan(ctx, s.SQL(), st.SQL, st.Vars...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		checked++
		t.Logf("%.120s\n    %s", q, strings.Join(plan, "\n    "))
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") {
				t.Errorf("%s\n  plan step %q: the statement reads the whole table\n  plan: %q", q, step, plan)
			}
			for _, ix := range indexes {
				if strings.Contains(step, "INDEX "+ix+" ") {
					used[ix] = true
				}
			}
		}
	}
	// The erasure's 10 statements and the deletion's 3.
	if checked < 13 {
		t.Fatalf("checked %d statements, want every statement of an erasure and a client deletion", checked)
	}
	for _, ix := range indexes {
		if !used[ix] {
			t.Errorf("no statement searched %s", ix)
		}
	}
}

// TestRemovalAtScale: an account's erasure and a client's deletion among
// 200,000 other token sessions, across the upgrade that finds a person's
// and a client's sessions through their links (migration 00014), on both
// backends. Before it, each read every token session; after it, only the
// person's or the client's. The answers are the same on both sides: the
// person's sessions are deactivated and the client's deleted, and nobody
// else's change. The median time of five of each is logged, not asserted;
// on PostgreSQL the buffers each token statement touches after the upgrade
// must stay a handful (TestRemovalPlans holds SQLite's plans).
func TestRemovalAtScale(t *testing.T) {
	const others = 200_000
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := openSchemaAt(t, backend, 13)
			now := time.Now().UTC().Truncate(time.Second)
			// Everyone else's sessions: 200,000 live tokens of 2,000 people
			// on one busy client, each on its link, as the product issues
			// them, and 1,000 of another person's on no link.
			blob := `x'7b7d'`
			if backend == "postgres" {
				blob = `'\x7b7d'::bytea`
			}
			fill := func(n int, linked bool) {
				t.Helper()
				link := `'lnk-busy-' || (i % 2000)`
				if !linked {
					link = `''`
				}
				sqltest.FillFunc(t, s.DB(), func(tx *gorm.DB) error {
					return tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO token_sessions (kind, signature_hash, request_id, client_id, account_id, link_id, active, request, expires_at, created_at)
SELECT 'refresh_token', ? || i, ? || i, 'agent-busy', 'acct-busy-' || (i % 2000), `+link+`, TRUE, `+blob+`, ?, ? FROM n`,
						n, fmt.Sprint("other-", linked, "-"), fmt.Sprint("req-", linked, "-"), now.Add(30*24*time.Hour), now).Error
				})
			}
			fill(others, true)
			fill(1000, false)
			othersLeft := func(when string) {
				t.Helper()
				var n int64
				if err := s.DB().Raw(`SELECT count(*) FROM token_sessions WHERE client_id = 'agent-busy' AND active`).Scan(&n).Error; err != nil {
					t.Fatal(err)
				}
				if n != others+1000 {
					t.Fatalf("%s: %d of the others' sessions left active, want %d", when, n, others+1000)
				}
			}

			round := 0
			// remove erases a new person and deletes a new client five
			// times, checks what each left, and returns the median times.
			remove := func(when string) (erase, del time.Duration) {
				t.Helper()
				var erases, dels []time.Duration
				for range 5 {
					round++
					p := newRemovalFixture(t, s, fmt.Sprint("person-", round), now)
					c := newRemovalFixture(t, s, fmt.Sprint("client-", round), now)
					began := time.Now()
					if err := s.EraseAccount(ctx, p.account, now); err != nil {
						t.Fatal(err)
					}
					erases = append(erases, time.Since(began))
					began = time.Now()
					if err := s.DeleteClient(ctx, c.client); err != nil {
						t.Fatal(err)
					}
					dels = append(dels, time.Since(began))
					for _, ts := range p.sessions {
						if got, err := s.GetTokenSession(ctx, ts.Kind, ts.SignatureHash); err != nil || got.Active {
							t.Fatalf("%s: the erased person's session %s: active %v, %v; want kept and inactive", when, ts.SignatureHash, got.Active, err)
						}
					}
					for _, ts := range c.sessions {
						if _, err := s.GetTokenSession(ctx, ts.Kind, ts.SignatureHash); !errors.Is(err, store.ErrNotFound) {
							t.Fatalf("%s: the deleted client's session %s: %v, want store.ErrNotFound", when, ts.SignatureHash, err)
						}
					}
				}
				othersLeft(when)
				slices.Sort(erases)
				slices.Sort(dels)
				return erases[2], dels[2]
			}
			// blocks replays the token statements of one erasure and one
			// deletion under EXPLAIN (ANALYZE, BUFFERS) in a transaction
			// rolled back, and returns the most buffers any of them
			// touched.
			blocks := func() (most int, plans []string) {
				t.Helper()
				round++
				p := newRemovalFixture(t, s, fmt.Sprint("person-", round), now)
				c := newRemovalFixture(t, s, fmt.Sprint("client-", round), now)
				captured := sqltest.Capture(t, s.DB(), "token_sessions")
				if err := s.EraseAccount(ctx, p.account, now); err != nil {
					t.Fatal(err)
				}
				if err := s.DeleteClient(ctx, c.client); err != nil {
					t.Fatal(err)
				}
				stmts := captured()
				if len(stmts) < 3 {
					t.Fatalf("captured %d token statements, want the erasure's and the deletion's", len(stmts))
				}
				for _, st := range stmts {
					tx, err := s.SQL().BeginTx(ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					root, _, err := sqltest.Explain(ctx, tx, st.SQL, st.Vars...)
					_ = tx.Rollback()
					if err != nil {
						t.Fatalf("%s: %v", st.SQL, err)
					}
					most = max(most, root.Blocks())
					plans = append(plans, fmt.Sprintf("%d buffers: %.110s", root.Blocks(), strings.Join(strings.Fields(st.SQL), " ")))
				}
				return most, plans
			}

			oldErase, oldDelete := remove("before the upgrade")
			var oldBlocks int
			if backend == "postgres" {
				var plans []string
				oldBlocks, plans = blocks()
				t.Logf("before the upgrade:\n  %s", strings.Join(plans, "\n  "))
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatalf("upgrade: %v", err)
			}
			// Migration 00018 adds columns to token_sessions: PostgreSQL
			// refuses, once per connection, a plan cached before it for a
			// statement reading every column. The pool starts afresh, as
			// the servers restarted after an upgrade do.
			s.SQL().SetMaxIdleConns(0)
			s.SQL().SetMaxIdleConns(s.PoolSize())
			newErase, newDelete := remove("after the upgrade")
			if backend == "postgres" {
				newBlocks, plans := blocks()
				t.Logf("after the upgrade:\n  %s", strings.Join(plans, "\n  "))
				if newBlocks > 40 {
					t.Errorf("a token statement of an erasure or a client deletion touched %d buffers among %d sessions, want a handful", newBlocks, others)
				}
				t.Logf("postgres: most buffers a token statement touched: %d before the upgrade, %d after", oldBlocks, newBlocks)
			}
			t.Logf("%s, %d other token sessions, median of 5: an erasure took %v before the upgrade and %v after; a client deletion %v and %v",
				backend, others, oldErase, newErase, oldDelete, newDelete)
		})
	}
}
