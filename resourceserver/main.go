// Command resourceserver serves Linkslot's MCP endpoint and its
// protected-resource metadata.
//
//	resourceserver [serve]   serve on LINKSLOT_RS_LISTEN (default)
//	resourceserver migrate   apply pending database migrations and exit
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
)

const prog = "resourceserver"

func main() {
	cmd := "serve"
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	if err := run(context.Background(), cmd); err != nil {
		app.Fatal(prog, err)
	}
}

func run(ctx context.Context, cmd string) error {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		return err
	}
	log := app.Logger(os.Stderr, cfg.LogFormat).With("server", prog)
	switch cmd {
	case "migrate":
		s, err := app.OpenStore(ctx, cfg, log, true)
		if err != nil {
			return err
		}
		return s.Close()
	case "serve":
		if err := cfg.EnsureSecretKey(); err != nil {
			return err
		}
		s, err := app.OpenStore(ctx, cfg, log, false)
		if err != nil {
			return err
		}
		defer s.Close()
		m := metrics.New(prog)
		m.RegisterDB("main", s.SQL())
		h, err := rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: log, Metrics: m})
		if err != nil {
			return err
		}
		if err := app.ServeMetrics(ctx, cfg.MetricsListen, m.Handler(), log); err != nil {
			return err
		}
		l, err := app.Listen(cfg.RSListen)
		if err != nil {
			return err
		}
		log.Info("resource server listening", "addr", l.Addr().String(), "resource", cfg.Resource, "issuer", cfg.Issuer)
		return app.Serve(ctx, l, h, cfg.ShutdownTimeout, log)
	default:
		return fmt.Errorf("unknown command %q (use serve or migrate)", cmd)
	}
}
