package sqlstore

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// gormLogger sends gorm's messages to slog. SQL text is logged only for slow
// statements and never with bound values, so no secret reaches a log.
type gormLogger struct {
	log  *slog.Logger
	slow time.Duration
}

func newGormLogger(l *slog.Logger) logger.Interface {
	return &gormLogger{log: l, slow: 500 * time.Millisecond}
}

func (g *gormLogger) LogMode(logger.LogLevel) logger.Interface { return g }
func (g *gormLogger) Info(ctx context.Context, msg string, _ ...any) {
	g.log.DebugContext(ctx, "gorm", "msg", msg)
}
func (g *gormLogger) Warn(ctx context.Context, msg string, _ ...any) {
	g.log.WarnContext(ctx, "gorm", "msg", msg)
}
func (g *gormLogger) Error(ctx context.Context, msg string, _ ...any) {
	g.log.ErrorContext(ctx, "gorm", "msg", msg)
}

// Trace logs slow statements; errors are returned to callers, which decide
// whether they are worth logging (a unique violation usually is not).
func (g *gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return
	}
	if d := time.Since(begin); d > g.slow {
		g.log.WarnContext(ctx, "slow query", "duration", d)
	}
}
