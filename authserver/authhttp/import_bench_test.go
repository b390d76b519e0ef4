package authhttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// BenchmarkRefreshDuringImport: 16 workers rotate refresh tokens through
// /oauth2/token, first alone for a few seconds, then while a 5,000-business
// catalog is imported through POST /admin/api/catalog; it reports each p99
// and their ratio (docs/reference.md §6: target ≤ 2), the import's time and
// status. One iteration is the whole run:
//
//	scripts/with-postgres go test ./authserver/authhttp -run '^$' -bench RefreshDuringImport -benchtime 1x
func BenchmarkRefreshDuringImport(b *testing.B) {
	const workers, businesses = 16, 5000
	file := testkit.CatalogFile(businesses)
	for _, be := range sqltest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			for range b.N {
				e := importEnvWith(b, be.Open(b), 0) // rotations keep the default deadline
				rotate := refreshChains(b, e, workers)
				quiet := rotateWhile(workers, rotate, func() { time.Sleep(5 * time.Second) })
				var code int
				var took time.Duration
				busy := rotateWhile(workers, rotate, func() {
					t0 := time.Now()
					code, _ = postCatalog(b, e, file)
					took = time.Since(t0)
				})
				if code != http.StatusOK {
					b.Fatalf("import answered %d", code)
				}
				b.ReportMetric(ms(quiet.p99), "p99_quiet_ms")
				b.ReportMetric(ms(busy.p99), "p99_import_ms")
				b.ReportMetric(float64(busy.p99)/float64(quiet.p99), "p99_ratio")
				b.ReportMetric(took.Seconds(), "import_s")
				b.ReportMetric(float64(quiet.failures+busy.failures), "failures")
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// refreshChains starts one refresh chain per worker and answers a rotation
// of worker w's chain (a refresh_token grant at /oauth2/token).
func refreshChains(b *testing.B, e *env, workers int) func(w int) error {
	hc := benchClient()
	c := e.oauth(publicID, "", "openid")
	rts := make([]string, workers)
	for w := range rts {
		v := oauth2.GenerateVerifier()
		st, m := exchange(e, publicID, e.code(c, e.account.ID, oauth2.S256ChallengeOption(v)), v, nil)
		if st != 200 {
			b.Fatalf("exchange %d %v", st, m)
		}
		rts[w] = m["refresh_token"].(string)
	}
	return func(w int) error {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rts[w]}, "client_id": {publicID}}
		resp, err := hc.Post(e.issuer+"/oauth2/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("refresh: status %d", resp.StatusCode)
		}
		rts[w] = out["refresh_token"].(string)
		return nil
	}
}

type rotations struct {
	p99      time.Duration
	failures int64
}

// rotateWhile runs workers rotating their chains until during returns.
func rotateWhile(workers int, rotate func(int) error, during func()) rotations {
	var stop atomic.Bool
	var failures atomic.Int64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				t0 := time.Now()
				if rotate(w) != nil {
					failures.Add(1)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	during()
	stop.Store(true)
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return rotations{failures: failures.Load()}
	}
	return rotations{p99: all[min(len(all)*99/100, len(all)-1)], failures: failures.Load()}
}
