package booking

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// benchStore opens a backend with a big catalog and a few bookings per staff
// member per day, for days days from fixtureNow.
func benchStore(b *testing.B, be sqltest.Backend, staff, services, days int) (*fixture, store.Catalog) {
	b.Helper()
	s := be.Open(b)
	ctx := context.Background()
	f := newFixture(b, s, bigCatalog("biz-bench", staff, services))
	cat, err := s.LoadCatalog(ctx, "biz-bench")
	if err != nil {
		b.Fatal(err)
	}
	loc, _ := time.LoadLocation(cat.Business.TimeZone)
	sv := cat.Services[0]
	for d := 1; d <= days; d++ {
		day := fixtureNow.In(loc).AddDate(0, 0, d)
		for i, st := range cat.Staff {
			for _, h := range []int{9, 14, 17} {
				start := time.Date(day.Year(), day.Month(), day.Day(), h, 15*(i%4), 0, 0, loc)
				end, bs, bend := bookingSpan(&sv, start)
				if err := s.InsertBooking(ctx, store.Booking{ID: store.NewID("bkg"), Reference: NewReference(), BusinessID: cat.Business.ID,
					ServiceID: sv.ID, StaffID: st.ID, AccountID: "acc_bench", StartsAt: store.UTC(start), EndsAt: end, BlockStart: bs, BlockEnd: bend,
					Status: store.BookingConfirmed, Version: 1, Currency: "USD", CreatedAt: fixtureNow, UpdatedAt: fixtureNow}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return f, cat
}

// BenchmarkAvailabilityDay: one day's answer for one service performed by 20
// staff members, in a business of 20 staff × 10 services.
func BenchmarkAvailabilityDay(b *testing.B) {
	for _, be := range sqltest.Backends() {
		b.Run(be.Name+"/20staff_10services", func(b *testing.B) {
			f, cat := benchStore(b, be, 20, 10, 2)
			ctx := context.Background()
			date := fixtureNow.AddDate(0, 0, 1).Format("2006-01-02")
			if _, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: "svc-00", LocalDate: date}); err != nil {
				b.Fatal(err)
			}
			n := countStatements(b, f.st)
			n.Store(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sv := cat.Services[i%len(cat.Services)].Reference
				if _, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: sv, LocalDate: date}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n.Load())/float64(b.N), "stmts/answer")
		})
	}
}

// BenchmarkAvailability14Days: 14 daily answers (one op) for a service
// performed by 50 staff members.
func BenchmarkAvailability14Days(b *testing.B) {
	for _, be := range sqltest.Backends() {
		b.Run(be.Name+"/50staff", func(b *testing.B) {
			f, _ := benchStore(b, be, 50, 2, 14)
			ctx := context.Background()
			if _, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: "svc-00", LocalDate: "2026-06-02"}); err != nil {
				b.Fatal(err)
			}
			n := countStatements(b, f.st)
			n.Store(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for d := 1; d <= 14; d++ {
					date := fixtureNow.AddDate(0, 0, d).Format("2006-01-02")
					if _, err := f.svc.Availability(ctx, AvailabilityQuery{BusinessRef: "biz-bench", ServiceRef: "svc-00", LocalDate: date}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n.Load())/float64(b.N*14), "stmts/answer")
		})
	}
}

// BenchmarkSearch100k: business search over 100,000 generated businesses on
// PostgreSQL (trigram index), with p50/p99 latency. Benchmarks run only
// under -bench, so normal test runs never build the 100k rows.
func BenchmarkSearch100k(b *testing.B) {
	s := sqltest.Postgres(b)
	ctx := context.Background()
	if err := seedBusinesses(ctx, s, 100_000); err != nil {
		b.Fatal(err)
	}
	svc := NewService(s, func() time.Time { return fixtureNow })
	queries := []struct{ text, city string }{
		{"barber", ""}, {"dental", "london"}, {"massage", ""}, {"yoga studio", "tokyo"},
		{"brightcut", ""}, {"hair", "new york"}, {"physio", ""}, {"nails 4217", ""},
	}
	b.Run("query", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			q := queries[i%len(queries)]
			t0 := time.Now()
			if _, err := svc.SearchBusinesses(ctx, q.text, q.city, 10, 0); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(pct(0.50), "p50-ms")
		b.ReportMetric(pct(0.99), "p99-ms")
	})
}

// seedBusinesses inserts n agent-enabled businesses (generate_series, in
// chunks that stay well inside the statement timeout), with search text as
// PutCatalog would compute it, then analyzes the table.
func seedBusinesses(ctx context.Context, s *sqlstore.Store, n int) error {
	const chunk = 10_000
	for lo := 1; lo <= n; lo += chunk {
		hi := min(lo+chunk-1, n)
		if err := s.DB().WithContext(ctx).Exec(fmt.Sprintf(`
INSERT INTO businesses (id, reference, name, description, category, city, address, time_zone, agent_booking,
  currency, search_text, created_at, updated_at)
SELECT 'biz_gen' || g, 'biz-gen-' || g, name, '', 'appointment', city, g || ' Main Street', 'UTC', g %% 10 <> 0,
  'USD', lower(name || ' appointment ' || city || ' ' || svc), now(), now()
FROM (SELECT g,
  (ARRAY['Brightcut','Harbour','Sakura','Thames','Hudson','Glow','Lotus','Maple'])[1 + g %% 8] || ' ' ||
  (ARRAY['Barbers','Dental','Massage','Yoga Studio','Hair Lab','Physio','Nails','Spa'])[1 + (g / 8) %% 8] || ' ' || g AS name,
  (ARRAY['New York','London','Tokyo','Sydney','Chicago','Paris','Berlin'])[1 + (g / 3) %% 7] AS city,
  (ARRAY['haircut fade','cleaning whitening','deep tissue','vinyasa class','cut colour','assessment','gel manicure','facial'])[1 + (g / 8) %% 8] AS svc
  FROM generate_series(%d, %d) AS g) AS x`, lo, hi)).Error; err != nil {
			return err
		}
	}
	return s.DB().WithContext(ctx).Exec("ANALYZE businesses").Error
}
