package rshttp_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
)

// noopDomain answers availability without touching the database: the
// baseline that isolates the cost of HTTP, MCP and authentication.
type noopDomain struct{}

func (noopDomain) SearchBusinesses(context.Context, string, string, int, int) (booking.BusinessPage, error) {
	return booking.BusinessPage{}, nil
}
func (noopDomain) Catalog(context.Context, string) (booking.CatalogView, error) {
	return booking.CatalogView{}, nil
}
func (noopDomain) Availability(_ context.Context, q booking.AvailabilityQuery) (booking.Availability, error) {
	return booking.Availability{BusinessReference: q.BusinessRef, ServiceReference: q.ServiceRef, LocalDate: q.LocalDate,
		TimeZone: "America/New_York", Staff: []booking.StaffSlots{}}, nil
}
func (noopDomain) MyBookings(context.Context, string, string, int, int) (booking.BookingPage, error) {
	return booking.BookingPage{}, nil
}
func (noopDomain) MyBooking(context.Context, string, string) (booking.BookingView, error) {
	return booking.BookingView{}, nil
}
func (noopDomain) RescheduleAvailability(context.Context, string, string, string, string) (booking.Availability, error) {
	return booking.Availability{}, nil
}

// BenchmarkCheckBusinessAvailability measures check_business_availability
// (a service and a local date: the slot engine on the demo data, SQLite)
// with 16 concurrent clients over HTTP keep-alive, in three setups:
//
//	auth      the production path: bearer verification + the real engine
//	noauth    authentication switched off (rshttp.Deps.AuthDisabled)
//	noop-tool authentication on, the engine replaced by a no-op
//
// It reports calls/s and the p99 latency; auth/noauth is the cost of
// authentication, auth/noop-tool the cost of the domain.
//
//	go test ./resourceserver/rshttp -run '^$' -bench CheckBusinessAvailability -benchtime 3s
func BenchmarkCheckBusinessAvailability(b *testing.B) {
	for _, c := range []struct {
		name string
		o    envOpts
	}{
		{"auth", envOpts{noLimits: true}},
		{"noauth", envOpts{noLimits: true, authDisabled: true}},
		{"noop-tool", envOpts{noLimits: true, domain: noopDomain{}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, c.o)
			if len(booking.DemoCatalogs(e.clock.Now())) == 0 {
				b.Skip("internal/booking has no demo catalogs yet")
			}
			tok := ""
			if !c.o.authDisabled {
				tok = e.token(func(tc *tokenClaims) { tc.Exp = e.clock.Now().Add(24 * time.Hour).Unix() })
			}
			body := toolCall("check_business_availability", map[string]any{"business_reference": "biz-brightcut-barbers",
				"service_reference": "svc-classic-haircut", "local_date": "2026-03-04"})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
			call := func() error {
				req, _ := http.NewRequest(http.MethodPost, e.resource, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || strings.Contains(string(b), `"isError":true`) {
					return &callError{resp.StatusCode, string(b)}
				}
				return nil
			}
			if err := call(); err != nil { // warm caches: JWKS, link, catalog
				b.Fatal(err)
			}
			var (
				mu   sync.Mutex
				lats []time.Duration
			)
			b.SetParallelism(16 / max(1, runtimeProcs()))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var local []time.Duration
				for pb.Next() {
					t0 := time.Now()
					if err := call(); err != nil {
						b.Error(err)
						return
					}
					local = append(local, time.Since(t0))
				}
				mu.Lock()
				lats = append(lats, local...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if len(lats) == 0 {
				return
			}
			slices.Sort(lats)
			p99 := lats[(len(lats)*99)/100]
			b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		})
	}
}

type callError struct {
	status int
	body   string
}

func (c *callError) Error() string { return http.StatusText(c.status) + ": " + c.body }

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
