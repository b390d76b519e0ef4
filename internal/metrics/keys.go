package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/store"
)

// KeyLister is the one store method the signing-key collector needs
// (store.Keys has it).
type KeyLister interface {
	ListSigningKeys(ctx context.Context, purpose string) ([]store.SigningKey, error)
}

// RegisterSigningKeys exports, for each purpose ("token", "grant"), the
// creation time of the current signing key as
// linkslot_signing_key_created_timestamp_seconds{purpose} and the number of
// keys stored as linkslot_signing_keys{purpose}, so an alert can fire when a
// rotation is overdue. The store is read at scrape time, at most every 30
// seconds, with a 2-second timeout; a failed read leaves the series out
// (alert on absent()). Register once per process (a second call adds
// nothing).
func (m *Metrics) RegisterSigningKeys(keys KeyLister, purposes ...string) {
	if m == nil || keys == nil || len(purposes) == 0 {
		return
	}
	c := &keyCollector{
		keys: keys, purposes: purposes, now: time.Now, every: 30 * time.Second,
		created: prometheus.NewDesc("linkslot_signing_key_created_timestamp_seconds",
			"Creation time of the current (newest) signing key, by purpose.", []string{"purpose"}, m.constLabels),
		count: prometheus.NewDesc("linkslot_signing_keys",
			"Signing keys stored (current, previous and older), by purpose.", []string{"purpose"}, m.constLabels),
	}
	_ = m.reg.Register(c) // AlreadyRegisteredError on a second call: keep the first
}

type keyCollector struct {
	keys     KeyLister
	purposes []string
	now      func() time.Time
	every    time.Duration

	created, count *prometheus.Desc

	mu      sync.Mutex
	read    time.Time
	metrics []prometheus.Metric
}

var _ prometheus.Collector = (*keyCollector)(nil)

func (c *keyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.created
	ch <- c.count
}

func (c *keyCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); c.read.IsZero() || now.Sub(c.read) >= c.every || now.Before(c.read) {
		c.metrics = c.metrics[:0]
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		for _, p := range c.purposes {
			ks, err := c.keys.ListSigningKeys(ctx, p)
			if err != nil {
				continue
			}
			c.metrics = append(c.metrics, prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(len(ks)), p))
			if len(ks) > 0 {
				newest := ks[0].CreatedAt
				for _, k := range ks[1:] {
					if k.CreatedAt.After(newest) {
						newest = k.CreatedAt
					}
				}
				c.metrics = append(c.metrics, prometheus.MustNewConstMetric(c.created, prometheus.GaugeValue,
					float64(newest.UnixNano())/1e9, p))
			}
		}
		cancel()
		c.read = now
	}
	for _, mm := range c.metrics {
		ch <- mm
	}
}
