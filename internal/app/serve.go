package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// Server is what one Linkslot server brings to the serve sequence both
// run (RunServer).
type Server struct {
	// Name is the program's name ("authserver", "resourceserver"): its
	// metrics' service and the janitor's.
	Name string
	// Listen and MetricsListen are its addresses (LINKSLOT_AUTH_LISTEN,
	// LINKSLOT_AUTH_METRICS_LISTEN or the resource server's); an empty
	// MetricsListen serves no metrics.
	Listen, MetricsListen string
	// ListenVar and MetricsListenVar name those variables in a listen
	// failure.
	ListenVar, MetricsListenVar string
	// ReadyFile (serve --ready-file), when set, gets the address once
	// the server listens (WriteReadyFile); it is removed on the way out.
	ReadyFile string
	// Register adds the server's own metrics (nil: none).
	Register func(m *metrics.Metrics)
	// Handler builds the server's handler; what it starts in the
	// background runs until ctx ends.
	Handler func(ctx context.Context, m *metrics.Metrics) (http.Handler, error)
	// Listening is the line logged once it listens ("authorization
	// server listening"), with the address and Attrs.
	Listening string
	Attrs     []any
}

// RunServer is the serve sequence of both servers: the listener first (a
// taken address ends the start before anything runs), metrics (the
// database pool's and the server's own), the janitor, the handler, the
// metrics listener, the ready file, and serving until ctx ends or
// SIGINT/SIGTERM arrives, then draining for drain.
func RunServer(ctx context.Context, s *sqlstore.Store, log *slog.Logger, srv Server, drain time.Duration) error {
	l, err := Listen(srv.Listen)
	if err != nil {
		return fmt.Errorf("%s: %w", srv.ListenVar, err)
	}
	defer l.Close()
	m := metrics.New(srv.Name)
	m.RegisterDB("main", s.SQL())
	if srv.Register != nil {
		srv.Register(m)
	}
	if err := StartJanitor(ctx, srv.Name, s, m, log); err != nil {
		return err
	}
	h, err := srv.Handler(ctx, m)
	if err != nil {
		return err
	}
	if err := ServeMetrics(ctx, srv.MetricsListen, m.Handler(), log); err != nil {
		return fmt.Errorf("%s: %w", srv.MetricsListenVar, err)
	}
	log.Info(srv.Listening, append([]any{"addr", l.Addr().String()}, srv.Attrs...)...)
	unready, err := WriteReadyFile(srv.ReadyFile, l)
	if err != nil {
		return err
	}
	defer unready()
	return Serve(ctx, l, h, drain, log)
}
