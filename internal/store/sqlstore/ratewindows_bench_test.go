package sqlstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// BenchmarkTakeRate measures the shared limit's write path (one UPSERT per
// counted hit) on PostgreSQL from 16 goroutines, with the table UNLOGGED
// (as migrated) and LOGGED (every hit's commit waits for a WAL flush), on
// 16 keys (16 clients) and on one key (one client: every hit waits for the
// same row's lock). The limit is never reached, so every call writes.
//
//	scripts/with-postgres go test -run '^$' -bench TakeRate -benchtime 3000x ./internal/store/sqlstore/
func BenchmarkTakeRate(b *testing.B) {
	s := sqltest.Postgres(b)
	ctx := context.Background()
	for _, mode := range []string{"unlogged", "logged"} {
		if err := s.DB().Exec("ALTER TABLE rate_windows SET " + mode).Error; err != nil {
			b.Fatal(err)
		}
		for _, keys := range []int{16, 1} {
			b.Run(fmt.Sprintf("%s/%dkeys", mode, keys), func(b *testing.B) {
				var n atomic.Int64
				b.SetParallelism(8)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					key := fmt.Sprint("bench:", n.Add(1)%int64(keys))
					for pb.Next() {
						if _, err := s.TakeRate(ctx, key, time.Now().Unix(), 2, 1<<30); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "hits/s")
			})
		}
	}
}
