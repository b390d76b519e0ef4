package sqlstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/storetest"
)

const benchStaff = 20

// benchCatalog puts a business with benchStaff staff members performing one
// 30-minute service with a 10-minute buffer after.
func benchCatalog(b *testing.B, s *sqlstore.Store) store.Catalog {
	c := store.Catalog{
		Business: store.Business{Reference: "bench", Name: "Bench", Category: store.CategoryAppointment, TimeZone: "UTC", AgentBooking: true, Currency: "EUR"},
		Services: []store.Service{{Reference: "cut", Name: "Cut", DurationMinutes: 30, Currency: "EUR", BufferAfterMinutes: 10}},
	}
	for i := range benchStaff {
		c.Staff = append(c.Staff, store.Staff{Reference: fmt.Sprint("s", i), Name: fmt.Sprint("Staff ", i), ServiceIDs: []string{"cut"}})
	}
	out, err := s.PutCatalog(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// benchInserts inserts b.N confirmed, non-overlapping bookings from
// parallel goroutines (spread over the staff, one hour apart per staff
// member) and reports inserts/s.
func benchInserts(b *testing.B, s *sqlstore.Store) float64 {
	c := benchCatalog(b, s)
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	var next atomic.Int64
	ctx := context.Background()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			st := c.Staff[i%benchStaff]
			start := base.Add(time.Duration(i/benchStaff) * time.Hour)
			bk := store.Booking{ID: store.NewID("bkg"), Reference: store.NewID("LS"), BusinessID: c.Business.ID,
				ServiceID: c.Services[0].ID, StaffID: st.ID, AccountID: "acc", StartsAt: start, EndsAt: start.Add(30 * time.Minute),
				BlockStart: start, BlockEnd: start.Add(40 * time.Minute), Status: store.BookingConfirmed, Version: 1,
				CreatedAt: base, UpdatedAt: base}
			if err := s.InsertBooking(ctx, bk); err != nil {
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
		keep(&excl, b, benchInserts(b, storetest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})))
	})
	b.Run("postgres/plain", func(b *testing.B) {
		s := storetest.PostgresWith(b, sqlstore.Options{MaxOpenConns: 16})
		if err := s.DB().Exec("ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap").Error; err != nil {
			b.Fatal(err)
		}
		keep(&plain, b, benchInserts(b, s))
	})
	b.Run("sqlite", func(b *testing.B) {
		benchInserts(b, storetest.SQLite(b))
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
