package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// full reports whether the full counts run (make test-cluster).
func full() bool { return os.Getenv("LINKSLOT_CLUSTER_FULL") != "" }

func agentsCount() int {
	if full() {
		return 200
	}
	return 24
}

// documentedCodes are the tool error codes of docs/reference.md §5, plus server_error
// (the retryable answer for an unreachable database).
var documentedCodes = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`invalid_argument invalid_time unknown_business unknown_service unknown_staff
		staff_service_mismatch business_not_bookable slot_taken too_soon beyond_booking_horizon in_the_past
		deposit_required payment_active booking_not_found already_cancelled cancellation_closed invalid_grant
		expired_grant confirmation_required summary_changed missing_idempotency_key invalid_idempotency_key
		idempotency_conflict rate_limited`) {
		documentedCodes[c] = true
	}
}

// tally counts answers by kind.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) add(kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	t.n[kind]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []string
	total := 0
	for k, v := range t.n {
		keys = append(keys, fmt.Sprintf("%s=%d", k, v))
		total += v
	}
	sort.Strings(keys)
	return fmt.Sprintf("%d answers: %s", total, strings.Join(keys, " "))
}

func (t *tally) get(k string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[k]
}

// parallel runs fn(i) for i in [0,n) on at most width goroutines.
func parallel(n, width int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, width)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// linkAgents links n agents, alternating authorization server replicas.
func linkAgents(t *testing.T, c *Cluster, prefix string, n int) []*Agent {
	t.Helper()
	accts := c.CreateAccounts(t, prefix, n)
	agents := make([]*Agent, n)
	var failed atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	parallel(n, 8, func(i int) {
		a, err := Link(ctx, c.AS[i%len(c.AS)], accts[i].Email, DemoPassword)
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
			return
		}
		agents[i] = a
	})
	if failed.Load() > 0 {
		t.Fatalf("%d of %d agents could not link; first: %v", failed.Load(), n, firstErr.Load())
	}
	return agents
}

func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("the cluster starts PostgreSQL and five server processes")
	}
	c := Start(t, Options{})
	c.PutRaceBusiness(t)
	ctx := context.Background()
	n := agentsCount()
	start := time.Now()
	agents := linkAgents(t, c, "main", n)
	// Each agent speaks from its own loopback address, as separate agents
	// do: the per-address limit is shared by every resource server, so
	// agents on one address would share 200 requests per 2 s between them.
	for i, a := range agents {
		a.HTTP = &http.Client{Transport: agentTransport(i), Timeout: 30 * time.Second}
	}
	t.Logf("linked %d agents (distinct accounts) through %d authorization servers in %s", n, len(c.AS), time.Since(start).Round(time.Millisecond))

	t.Run("SDKClientOnEveryReplica", func(t *testing.T) {
		for _, rs := range c.RS {
			cs, err := agents[0].Session(ctx, rs, c.Resource)
			if err != nil {
				t.Fatalf("%s: connect: %v", rs.Name, err)
			}
			tl, err := cs.ListTools(ctx, nil)
			cs.Close()
			if err != nil || len(tl.Tools) < 5 {
				t.Fatalf("%s: tools/list: %v", rs.Name, err)
			}
		}
	})

	t.Run("ReadsAcrossReplicas", func(t *testing.T) {
		var tl tally
		day := RaceDay().Format("2006-01-02")
		parallel(len(agents), 16, func(i int) {
			ans := Call(ctx, agents[i].HTTP, c.RS[i%len(c.RS)], agents[i].Token.AccessToken, "check_business_availability",
				map[string]any{"business_reference": RaceBusiness, "service_reference": RaceService, "local_date": day})
			tl.add(ans.Kind)
		})
		t.Logf("availability across %d replicas: %s", len(c.RS), tl.String())
		if tl.get("ok") != len(agents) {
			t.Fatalf("not every availability answer succeeded: %s", tl.String())
		}
	})

	t.Run("RefreshReplayAcrossAuthorizationServers", func(t *testing.T) {
		a := agents[0]
		old := a.Token.RefreshToken
		rotated, st, err := a.Refresh(ctx, c.AS[0], old)
		if err != nil {
			t.Fatalf("rotation at as1: %d %v", st, err)
		}
		// Within the refresh grace, while its successor is unused, the old
		// token answers that successor at the other replica too.
		again, st, err := a.Refresh(ctx, c.AS[1], old)
		if err != nil || again.RefreshToken != rotated.RefreshToken {
			t.Fatalf("the rotated token presented again at as2 within the grace: status %d err %v; want 200 with the same successor", st, err)
		}
		next, st, err := a.Refresh(ctx, c.AS[0], rotated.RefreshToken)
		if err != nil {
			t.Fatalf("the successor at as1: %d %v", st, err)
		}
		// Once the successor is used, the old token is reuse.
		if _, st, err := a.Refresh(ctx, c.AS[1], old); err == nil || st != http.StatusBadRequest {
			t.Fatalf("replay of the old token at as2 after its successor was used: status %d err %v; want 400 invalid_grant", st, err)
		}
		if _, st, err := a.Refresh(ctx, c.AS[0], next.RefreshToken); err == nil {
			t.Fatalf("after reuse the family must be revoked, but its newest refresh token still rotates (%d)", st)
		}
		if _, _, err := a.Refresh(ctx, c.AS[1], next.RefreshToken); err == nil {
			t.Fatal("the family's newest refresh token still rotates at as2")
		}
		t.Logf("refresh rotated on as1, presented again on as2 → the same successor; after the successor was used, replayed on as2 → refused, the family's newest token refused on both replicas")
	})

	t.Run("ParallelRefreshAcrossAuthorizationServers", func(t *testing.T) { parallelRefreshScenario(t, c) })

	t.Run("DisconnectSeenByEveryResourceServer", func(t *testing.T) {
		a := agents[1]
		for _, rs := range c.RS { // warm every replica's caches with this token
			if ans := Call(ctx, a.HTTP, rs, a.Token.AccessToken, "search_my_bookings", map[string]any{}); ans.Kind != "ok" {
				t.Fatalf("%s before disconnect: %s", rs.Name, ans.Kind)
			}
		}
		if err := a.Disconnect(ctx, c.AS[1]); err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		refusedAfter := make([]time.Duration, len(c.RS))
		var wg sync.WaitGroup
		for i, rs := range c.RS {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(at) < 10*time.Second {
					// Measured at the moment the refused request was sent,
					// so a slow answer on a busy machine does not count.
					sentAt := time.Since(at)
					if ans := Call(ctx, a.HTTP, rs, a.Token.AccessToken, "search_my_bookings", map[string]any{}); ans.Status == 401 {
						refusedAfter[i] = sentAt
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				refusedAfter[i] = -1
			}()
		}
		wg.Wait()
		t.Logf("disconnected on as2; refused by rs1..rs3 after %v", refusedAfter)
		for i, d := range refusedAfter {
			// docs/reference.md §3: within 5 seconds.
			if d < 0 || d > 5*time.Second {
				t.Errorf("%s refused the disconnected link's token after %v (want ≤ 5 s)", c.RS[i].Name, d)
			}
		}
		if _, _, err := a.Refresh(ctx, c.AS[0], a.Token.RefreshToken); err == nil {
			t.Error("the disconnected link's refresh token still rotates")
		}
	})

	t.Run("RaceForOverlappingSlots", func(t *testing.T) { raceScenario(t, c, agents[2:]) })
	t.Run("IdempotentRetriesAcrossReplicas", func(t *testing.T) { idempotencyScenario(t, c, agents[2]) })
	t.Run("DatabaseOutage", func(t *testing.T) { outageScenario(t, c, agents[2:]) })
	t.Run("SlowDatabase", func(t *testing.T) { slowScenario(t, c, agents[3]) })
	t.Run("ResourceServerKilledMidMutation", func(t *testing.T) { killScenario(t, c, agents[2:]) })
}
