package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// binder collects a statement's arguments and writes each one's
// placeholder: ? in statements gorm sends, which it numbers itself on
// PostgreSQL, and $1, $2, … in those sent past it (direct).
type binder struct {
	args     []any
	numbered bool
}

// bind adds v to the arguments and answers its placeholder.
func (b *binder) bind(v any) string {
	b.args = append(b.args, v)
	if b.numbered {
		return "$" + strconv.Itoa(len(b.args))
	}
	return "?"
}

// direct sends a PostgreSQL statement with numbered placeholders to the
// store's connection pool, or to its transaction for a store bound to one,
// past gorm's statement building: gorm copies a statement's text byte by
// byte to number its placeholders and runs its callbacks around it. For
// the two statements of a refresh rotation (PrefetchStatement and
// TokenBatchStatement) that was 9% of the rotation's process CPU: 779
// against 708 µs in eight alternating runs of BenchmarkRefreshRotation on
// PostgreSQL. A statement is traced through gorm's logger as gorm traces
// one, so slow ones are logged alike and tests can count them.
func (s *Store) direct(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	begin := time.Now()
	rows, err := s.db.Statement.ConnPool.QueryContext(ctx, query, args...)
	s.db.Logger.Trace(ctx, begin, func() (string, int64) { return query, -1 }, err)
	return rows, err
}
