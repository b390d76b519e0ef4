package metrics

import "github.com/prometheus/client_golang/prometheus"

// newRefreshGrace is linkslot_refresh_grace_total, registered on m's
// registry at zero.
func newRefreshGrace(m *Metrics) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "linkslot_refresh_grace_total", ConstLabels: m.constLabels,
		Help: "Refresh grants answered within LINKSLOT_REFRESH_GRACE with the presented token's unused successor, instead of revoking its family.",
	})
	m.reg.MustRegister(c)
	return c
}

// ObserveRefreshGrace counts one refresh grant answered within the refresh
// grace (docs/refresh-grace.md).
func (m *Metrics) ObserveRefreshGrace() {
	if m == nil {
		return
	}
	m.refreshGrace.Inc()
}
