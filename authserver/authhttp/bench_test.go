package authhttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"gorm.io/gorm/logger"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// Benchmarks of the two hot paths, through HTTP on httptest, on every
// backend, with 16 workers (docs/reference.md §9):
//
//	scripts/with-postgres go test ./authserver/authhttp -run '^$' -bench . -benchtime 2000x
//
// They report flows per second, p99 latency and failures with
// b.ReportMetric; they never assert on speed. Every worker of the refresh
// benchmark rotates its own chain.

type scenario struct {
	name    string
	workers int
	open    func(testing.TB) *sqlstore.Store
}

// scenarios: 16 workers on the default pool of each backend, and 64
// workers on a pool of 4 connections (docs/reference.md §9: completes, no stall).
func scenarios() []scenario {
	var out []scenario
	for _, be := range sqltest.Backends() {
		out = append(out, scenario{be.Name + "/workers=16", 16, be.Open})
	}
	out = append(out,
		scenario{"sqlite/workers=64/pool=4", 64, func(t testing.TB) *sqlstore.Store {
			u := "sqlite://" + filepath.Join(t.TempDir(), "bench.db")
			st, err := sqlstore.Open(context.Background(), u, sqlstore.Options{MaxOpenConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if _, err := st.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			return st
		}},
		scenario{"postgres/workers=64/pool=4", 64, func(t testing.TB) *sqlstore.Store {
			return sqltest.PostgresWith(t, sqlstore.Options{MaxOpenConns: 4})
		}})
	return out
}

func benchClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// runWorkers runs n operations spread over benchWorkers goroutines, each
// with its own state from prepare, and reports throughput and p99.
func runWorkers(b *testing.B, s *sqlstore.Store, workers int, unit string, prepare func(worker int) func() error) {
	states := make([]func() error, workers)
	for w := range states {
		states[w] = prepare(w)
	}
	var next, failures atomic.Int64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	goCPU0, pgCPU0 := testkit.ProcessCPU(), postgresCPU(s)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := states[w](); err != nil {
					if failures.Add(1) == 1 {
						b.Log(err)
					}
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	goCPU, pgCPU := testkit.ProcessCPU()-goCPU0, postgresCPU(s)-pgCPU0
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	p99 := all[(len(all)*99)/100]
	if len(all) > 0 && (len(all)*99)/100 >= len(all) {
		p99 = all[len(all)-1]
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), unit+"/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(failures.Load()), "failures")
	// CPU per operation is steadier than throughput on a shared machine:
	// this process (server and load generator) and, when /proc shows them,
	// the PostgreSQL server processes of this machine.
	b.ReportMetric(float64(goCPU.Microseconds())/float64(b.N), "go_cpu_us/op")
	if pgCPU > 0 {
		b.ReportMetric(float64(pgCPU.Microseconds())/float64(b.N), "pg_cpu_us/op")
	}
}

// postgresCPU sums the CPU time of the server processes of s's PostgreSQL
// (backends and background processes, from pg_stat_activity) that /proc
// shows: 0 on SQLite, on a remote server, or outside Linux.
func postgresCPU(s *sqlstore.Store) time.Duration {
	if s.Dialect() != "postgres" {
		return 0
	}
	var pids []int
	if err := s.DB().Raw("SELECT pid FROM pg_stat_activity").Scan(&pids).Error; err != nil {
		return 0
	}
	var ticks int64
	for _, pid := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ... utime stime are fields 14 and 15.
		open, close := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(string(raw[close+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		sy, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + sy
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

func BenchmarkRefreshRotation(b *testing.B) {
	for _, sc := range scenarios() {
		b.Run(sc.name, func(b *testing.B) {
			s := sc.open(b)
			rotate := refreshChains(b, newEnv(b, s), sc.workers)
			runWorkers(b, s, sc.workers, "rotations", func(w int) func() error {
				return func() error { return rotate(w) }
			})
		})
	}
}

func BenchmarkCodeFlow(b *testing.B) {
	for _, sc := range scenarios() {
		b.Run(sc.name, func(b *testing.B) {
			s := sc.open(b)
			e := newEnv(b, s)
			hc := benchClient()
			c := e.oauth(publicID, "", "openid")
			// Remember consent once.
			v0 := oauth2.GenerateVerifier()
			e.code(c, e.account.ID, oauth2.S256ChallengeOption(v0))
			runWorkers(b, s, sc.workers, "flows", func(int) func() error {
				return func() error {
					v := oauth2.GenerateVerifier()
					req, _ := http.NewRequest(http.MethodGet, c.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v)), nil)
					req.AddCookie(&http.Cookie{Name: testCookie, Value: e.account.ID})
					resp, err := hc.Do(req)
					if err != nil {
						return err
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					loc, err := url.Parse(resp.Header.Get("Location"))
					if err != nil || loc.Query().Get("code") == "" {
						return fmt.Errorf("authorize: status %d", resp.StatusCode)
					}
					form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
						"redirect_uri": {e.redirect}, "code_verifier": {v}, "client_id": {publicID}}
					tr, err := hc.Post(e.issuer+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
					if err != nil {
						return err
					}
					io.Copy(io.Discard, tr.Body)
					tr.Body.Close()
					if tr.StatusCode != 200 {
						return fmt.Errorf("token: status %d", tr.StatusCode)
					}
					return nil
				}
			})
		})
	}
}

// stmtCounter counts the SQL statements the store sends while serving an
// HTTP request, by their first word: every statement, those gorm builds and
// those the store sends past it (sqlstore's direct), is traced through the
// store's gorm logger, which install wraps. Statements of the servers'
// background workers (the outbox claiming its messages, the janitor), whose
// contexts come from no request, are not counted. BEGIN and COMMIT are not
// traced; transactions are counted with txid_current on PostgreSQL.
type stmtCounter struct {
	mu    sync.Mutex
	t     testing.TB
	trace bool
	n     map[string]int
}

// install wraps s's logger. It must run before anything else uses s
// (the servers' background workers read the logger as they start a
// statement), and the wrapper stays for the store's life.
func (c *stmtCounter) install(t testing.TB, s *sqlstore.Store) {
	c.t = t
	db := s.DB()
	db.Logger = countingLogger{db.Logger, c}
}

func (c *stmtCounter) count(sql string) {
	sql = strings.TrimSpace(sql)
	verb, _, _ := strings.Cut(sql, " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trace {
		c.t.Log("  SQL:", truncate(sql, 150))
	}
	c.n[strings.ToUpper(verb)]++
}

// setTrace turns logging each statement on or off.
func (c *stmtCounter) setTrace(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace = on
}

// countingLogger is a gorm logger that counts each statement it traces.
type countingLogger struct {
	logger.Interface
	c *stmtCounter
}

func (l countingLogger) LogMode(level logger.LogLevel) logger.Interface {
	return countingLogger{l.Interface.LogMode(level), l.c}
}

func (l countingLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if ctx.Value(http.LocalAddrContextKey) != nil { // net/http's mark of a request's context
		sql, _ := fc()
		l.c.count(sql)
	}
	l.Interface.Trace(ctx, begin, fc, err)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (c *stmtCounter) take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, total := c.n, 0
	for _, v := range out {
		total += v
	}
	c.n = map[string]int{}
	return out, total
}

func writeTxns(t testing.TB, s *sqlstore.Store) int64 {
	if s.Dialect() != "postgres" {
		return 0
	}
	var n int64
	// Every writing transaction is assigned a transaction id, and only a
	// writing transaction waits for a WAL flush at commit: the difference of
	// two reads is the number of fsyncing commits in between (plus one, the
	// reading transaction itself).
	if err := s.DB().Raw("SELECT txid_current()").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStatementCounts logs how many SQL statements and commits one refresh
// rotation and one authorization-code flow cost (docs/reference.md §9), and holds
// PostgreSQL to them: a refresh rotation and a code exchange are a prefetch
// and one batch statement, one commit; an authorization with remembered
// consent is the person (the test UI reads the account), the client with
// the person's link, and the code's batch. The refresh grace is on, as by
// default: the rotation seals its successor in the same batch, and a grace
// answer (a spent token presented again) costs the prefetch, the read of
// the successor and the batch that requires it, one commit (docs/reference.md
// §14). Counts, not timings.
func TestStatementCounts(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		sc := &stmtCounter{n: map[string]int{}}
		sc.install(t, s)
		e := newEnvWith(t, s, func(d *authhttp.Deps) { d.Config.RefreshGrace = config.DefaultRefreshGrace })
		c := e.oauth(publicID, "", "openid", "offline_access")
		v0 := oauth2.GenerateVerifier()
		st, m := exchange(e, publicID, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v0)), v0, nil)
		if st != 200 {
			t.Fatalf("exchange %d %v", st, m)
		}
		rt := m["refresh_token"].(string)
		// Writing transactions are read off txid_current, the server's
		// counter: the packages go test ./... runs beside this one write to
		// the same server (every test on sqltest's PostgreSQL; test/cluster
		// starts servers of its own), so a window's count can only come out
		// above the store's own. The fewest of up to 40 windows, 50 ms
		// apart, is the store's.
		const n, windows = 5, 40
		want := map[string]int{"refresh rotation": 2, "refresh grace answer": 3, "authorize (remembered consent)": 3, "code exchange": 2}
		// measure runs op n times in each window, after prepare (outside
		// the window; nil: nothing).
		measure := func(label string, prepare, op func()) {
			fewest := int64(-1)
			for w := 0; w < windows; w++ {
				if prepare != nil {
					prepare()
				}
				c0 := writeTxns(t, s)
				sc.take()
				sc.setTrace(testing.Verbose() && w == 0)
				op()
				sc.setTrace(false)
				for range n - 1 {
					op()
				}
				verbs, total := sc.take()
				txns := writeTxns(t, s) - c0 - 1
				if fewest < 0 || txns < fewest {
					fewest = txns
				}
				if w == 0 {
					for k := range verbs {
						verbs[k] = verbs[k] / n
					}
					line := fmt.Sprintf("%s %s: %.1f statements %v", s.Dialect(), label, float64(total)/n, verbs)
					if s.Dialect() == "postgres" {
						line += fmt.Sprintf(", %.1f writing transactions", float64(txns)/n)
					}
					t.Log(line)
					if s.Dialect() == "postgres" && total != want[label]*n {
						t.Errorf("%s: %d statements in %d, want %d", label, total, n, want[label]*n)
					}
				}
				if s.Dialect() != "postgres" || fewest == n {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if s.Dialect() == "postgres" && fewest != n {
				t.Errorf("%s: at fewest %d writing transactions in %d, in %d windows; want %d", label, fewest, n, windows, n)
			}
		}
		measure("refresh rotation", nil, func() {
			st, m := refresh(e, publicID, rt)
			if st != 200 {
				t.Fatalf("refresh %d %v", st, m)
			}
			rt = m["refresh_token"].(string)
		})
		// Each window presents again a token rotated just before it.
		var spent, successor string
		measure("refresh grace answer", func() {
			spent = rt
			st, m := refresh(e, publicID, spent)
			if st != 200 {
				t.Fatalf("refresh %d %v", st, m)
			}
			successor, rt = m["refresh_token"].(string), m["refresh_token"].(string)
		}, func() {
			if st, m := refresh(e, publicID, spent); st != 200 || m["refresh_token"] != successor {
				t.Fatalf("grace answer %d %v", st, m)
			}
		})
		measure("authorize (remembered consent)", nil, func() {
			e.code(c, e.account.ID, oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		})
		// Each window exchanges n codes issued before it.
		var codes, verifiers []string
		measure("code exchange", func() {
			codes, verifiers = codes[:0], verifiers[:0]
			for range n {
				v := oauth2.GenerateVerifier()
				codes, verifiers = append(codes, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v))), append(verifiers, v)
			}
		}, func() {
			st, m := exchange(e, publicID, codes[0], verifiers[0], nil)
			codes, verifiers = codes[1:], verifiers[1:]
			if st != 200 {
				t.Fatalf("exchange %d %v", st, m)
			}
		})
	})
}

// TestWrongVerifierUsesUpPKCE: the PKCE session's deletion is deferred to
// the batch that redeems the code (docs/reference.md §9), but a failed attempt still
// uses it up, as fosite does: the right verifier after a wrong one fails.
// The PKCE session is kept in the code's row, and so is the OpenID one.
func TestWrongVerifierUsesUpPKCE(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		c := e.oauth(publicID, "", "openid")
		v := oauth2.GenerateVerifier()
		code := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v))
		if st, m := exchange(e, publicID, code, oauth2.GenerateVerifier(), nil); st != 400 {
			t.Fatalf("wrong verifier: %d %v", st, m)
		}
		if st, m := exchange(e, publicID, code, v, nil); st == 200 {
			t.Fatalf("right verifier after a wrong one: %d %v", st, m)
		}
		// An authorization stores one row: the code, which keeps its PKCE
		// and OpenID sessions (fositestore's fold.go).
		count := func(where string, args ...any) (n int64) {
			t.Helper()
			if err := s.DB().Raw("SELECT count(*) FROM token_sessions WHERE "+where, args...).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := count("TRUE")
		v2 := oauth2.GenerateVerifier()
		code2 := e.code(c, e.account.ID, oauth2.S256ChallengeOption(v2))
		if n := count("TRUE") - before; n != 1 {
			t.Fatalf("an authorization stored %d rows, want 1", n)
		}
		// And a successful redemption leaves no PKCE or OpenID session.
		if st, m := exchange(e, publicID, code2, v2, nil); st != 200 {
			t.Fatalf("exchange: %d %v", st, m)
		}
		if n := count("kind IN ('pkce', 'openid') AND request_id IN (SELECT request_id FROM token_sessions WHERE kind = 'authorize_code' AND active = ?)", false); n != 0 {
			t.Fatalf("%d PKCE/OpenID sessions left behind redeemed codes", n)
		}
	})
}
