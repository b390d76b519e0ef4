package metrics

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// dbCollector reads sql.DBStats at scrape time for every registered pool.
type dbCollector struct {
	mu  sync.Mutex
	dbs map[string]*sql.DB

	up, conns, maxOpen, waitCount, waitSeconds, closed *prometheus.Desc
}

var _ prometheus.Collector = (*dbCollector)(nil)

func newDBCollector(cl prometheus.Labels) *dbCollector {
	return &dbCollector{
		dbs: make(map[string]*sql.DB),
		up: prometheus.NewDesc("linkslot_db_up",
			"1 when the database answered a ping at scrape time (1 s timeout), else 0.", []string{"db"}, cl),
		conns: prometheus.NewDesc("linkslot_db_connections",
			"Database pool connections, by state (in_use, idle).", []string{"db", "state"}, cl),
		maxOpen: prometheus.NewDesc("linkslot_db_max_open_connections",
			"Configured maximum of open database connections (0 is unlimited).", []string{"db"}, cl),
		waitCount: prometheus.NewDesc("linkslot_db_wait_count_total",
			"Connections waited for because the pool was exhausted.", []string{"db"}, cl),
		waitSeconds: prometheus.NewDesc("linkslot_db_wait_duration_seconds_total",
			"Total time spent waiting for a pooled connection.", []string{"db"}, cl),
		closed: prometheus.NewDesc("linkslot_db_closed_total",
			"Connections closed by the pool, by reason (max_idle, max_idle_time, max_lifetime).", []string{"db", "reason"}, cl),
	}
}

func (c *dbCollector) add(name string, db *sql.DB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dbs[name] = db
}

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.conns, c.maxOpen, c.waitCount, c.waitSeconds, c.closed} {
		ch <- d
	}
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, db := range c.dbs {
		up := 1.0
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := db.PingContext(ctx); err != nil {
			up = 0
		}
		cancel()
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, name)
		s := db.Stats()
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.InUse), name, "in_use")
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.Idle), name, "idle")
		ch <- prometheus.MustNewConstMetric(c.maxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections), name)
		ch <- prometheus.MustNewConstMetric(c.waitCount, prometheus.CounterValue, float64(s.WaitCount), name)
		ch <- prometheus.MustNewConstMetric(c.waitSeconds, prometheus.CounterValue, s.WaitDuration.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(c.closed, prometheus.CounterValue, float64(s.MaxIdleClosed), name, "max_idle")
		ch <- prometheus.MustNewConstMetric(c.closed, prometheus.CounterValue, float64(s.MaxIdleTimeClosed), name, "max_idle_time")
		ch <- prometheus.MustNewConstMetric(c.closed, prometheus.CounterValue, float64(s.MaxLifetimeClosed), name, "max_lifetime")
	}
}
