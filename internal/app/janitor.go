package app

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkslot/linkslot/internal/janitor"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// StartJanitor runs the janitor's standard tasks on s in the background
// until ctx ends (every server process does; leases share the work between
// replicas), counting deleted rows in m under service.
func StartJanitor(ctx context.Context, service string, s *sqlstore.Store, m *metrics.Metrics, log *slog.Logger, extra ...janitor.Task) error {
	var reg prometheus.Registerer
	if r := m.Registry(); r != nil {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"service": service}, r)
	}
	j, err := janitor.New(janitor.Config{Leases: s, Tasks: append(janitor.Tasks(s), extra...), Logger: log, Registerer: reg})
	if err != nil {
		return err
	}
	go j.Run(ctx)
	return nil
}
