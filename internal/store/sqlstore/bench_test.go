package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

const benchStaff = 20

// benchCatalog puts a business with benchStaff staff members performing one
// 30-minute service with a 10-minute buffer after.
func benchCatalog(b testing.TB, s *sqlstore.Store) store.Catalog {
	out, err := s.PutCatalog(context.Background(), benchCatalogOf())
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// benchCatalogOf is benchCatalog's catalog, not yet put.
func benchCatalogOf() store.Catalog {
	c := store.Catalog{
		Business: store.Business{Reference: "bench", Name: "Bench", Category: store.CategoryAppointment, TimeZone: "UTC", AgentBooking: true, Currency: "EUR"},
		Services: []store.Service{{Reference: "cut", Name: "Cut", DurationMinutes: 30, Currency: "EUR", BufferAfterMinutes: 10}},
	}
	for i := range benchStaff {
		c.Staff = append(c.Staff, store.Staff{Reference: fmt.Sprint("s", i), Name: fmt.Sprint("Staff ", i), ServiceIDs: []string{"cut"}})
	}
	return c
}

// benchInserts inserts b.N confirmed, non-overlapping bookings from
// parallel goroutines (spread over the staff, one hour apart per staff
// member) and reports inserts/s.
func benchInserts(b *testing.B, s *sqlstore.Store) float64 {
	c := benchCatalog(b, s)
	var next atomic.Int64
	ctx := context.Background()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.InsertBooking(ctx, benchBooking(c, next.Add(1)-1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "inserts/s")
	return rate
}

// BenchmarkBookingInsert measures the confirmed-booking insert path:
// PostgreSQL with the bookings_no_overlap exclusion constraint, the same
// table without it ("plain"), and SQLite (serialized check-and-insert).
// The ratio plain/exclusion is logged.
//
//	scripts/with-postgres go test -run '^$' -bench BenchmarkBookingInsert -benchtime 2000x ./internal/store/sqlstore/
func BenchmarkBookingInsert(b *testing.B) {
	// With -count n each sub-benchmark runs n times in a row; the ratio is
	// of the means over every timed run (b.N > 1).
	var excl, plain []float64
	keep := func(l *[]float64, b *testing.B, rate float64) {
		if b.N > 1 {
			*l = append(*l, rate)
		}
	}
	b.Run("postgres/exclusion", func(b *testing.B) {
		keep(&excl, b, benchInserts(b, sqltest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})))
	})
	b.Run("postgres/plain", func(b *testing.B) {
		s := sqltest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})
		if err := s.DB().Exec("ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap").Error; err != nil {
			b.Fatal(err)
		}
		keep(&plain, b, benchInserts(b, s))
	})
	b.Run("sqlite", func(b *testing.B) {
		benchInserts(b, sqltest.SQLite(b))
	})
	// The separate runs above drift with machine load; this one alternates
	// the two tables in rounds (ABBA), so load hits both alike.
	b.Run("postgres/interleaved", func(b *testing.B) {
		ex := sqltest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})
		pl := sqltest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})
		if err := pl.DB().Exec("ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap").Error; err != nil {
			b.Fatal(err)
		}
		ins := []*inserter{newInserter(b, ex), newInserter(b, pl)}
		var took [2]time.Duration
		var done [2]int
		const rounds = 10
		b.ResetTimer()
		for r := range rounds {
			n := b.N / rounds
			if r == rounds-1 {
				n = b.N - (rounds-1)*(b.N/rounds)
			}
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, k := range order {
				took[k] += ins[k].run(b, n, 16)
				done[k] += n
			}
		}
		b.StopTimer()
		if took[0] > 0 && took[1] > 0 {
			e, p := float64(done[0])/took[0].Seconds(), float64(done[1])/took[1].Seconds()
			b.ReportMetric(e, "excl-inserts/s")
			b.ReportMetric(p, "plain-inserts/s")
			b.ReportMetric(e/p, "excl/plain")
			b.ReportMetric(0, "ns/op")
		}
	})
	if len(excl) > 0 && len(plain) > 0 {
		e, p := mean(excl), mean(plain)
		b.Logf("PostgreSQL confirmed-booking inserts/s (mean of %d runs): with exclusion constraint %.0f, without %.0f; with/without = %.2f",
			len(excl), e, p, e/p)
	}
}

func mean(l []float64) float64 {
	var sum float64
	for _, v := range l {
		sum += v
	}
	return sum / float64(len(l))
}

// inserter inserts confirmed, non-overlapping bookings into one store.
type inserter struct {
	s    *sqlstore.Store
	c    store.Catalog
	next atomic.Int64
}

func newInserter(b *testing.B, s *sqlstore.Store) *inserter {
	return &inserter{s: s, c: benchCatalog(b, s)}
}

// run inserts n bookings from workers goroutines and returns the time taken.
func (in *inserter) run(b *testing.B, n, workers int) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := in.s.InsertBooking(context.Background(), benchBooking(in.c, in.next.Add(1)-1)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

var benchBase = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)

// benchBooking is the i-th booking: staff i mod benchStaff, one hour after
// that staff member's previous one.
func benchBooking(c store.Catalog, i int64) store.Booking {
	st := c.Staff[i%benchStaff]
	start := benchBase.Add(time.Duration(i/benchStaff) * time.Hour)
	return store.Booking{ID: store.NewID("bkg"), Reference: store.NewID("LS"), BusinessID: c.Business.ID,
		ServiceID: c.Services[0].ID, StaffID: st.ID, AccountID: "acc", StartsAt: start, EndsAt: start.Add(30 * time.Minute),
		BlockStart: start, BlockEnd: start.Add(40 * time.Minute), Status: store.BookingConfirmed, Version: 1,
		CreatedAt: benchBase, UpdatedAt: benchBase}
}
