package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// binder collects a statement's arguments and writes each one's
// placeholder: ? in statements gorm sends, which numbers them itself on
// PostgreSQL, and in those sent past it (direct) to SQLite; $1, $2, … in
// those sent past it to PostgreSQL.
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

// binder is a binder for statements the store sends past gorm.
func (s *Store) binder() binder { return binder{numbered: s.dialect == "postgres"} }

// direct sends a statement whose placeholders s.binder wrote to the
// store's connection pool, or to its transaction for a store bound to one,
// past gorm's statement building: gorm copies a statement's text byte by
// byte to number its placeholders and runs its callbacks around it. For
// the two statements of a refresh rotation (PrefetchStatement and
// TokenBatchStatement) that was 9% of the rotation's process CPU: 779
// against 708 µs in eight alternating runs of BenchmarkRefreshRotation on
// PostgreSQL. The statements of the token paths go this way; the rest of
// the store is gorm's. A statement is traced through gorm's logger as
// gorm traces one, so slow ones are logged alike and tests can count them.
func (s *Store) direct(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	begin := time.Now()
	rows, err := s.db.Statement.ConnPool.QueryContext(ctx, query, args...)
	s.db.Logger.Trace(ctx, begin, func() (string, int64) { return query, -1 }, err)
	return rows, err
}

// directRow is direct for a statement that answers one row; a statement
// that answers none gives sql.ErrNoRows at Scan.
func (s *Store) directRow(ctx context.Context, query string, args ...any) *sql.Row {
	begin := time.Now()
	row := s.db.Statement.ConnPool.QueryRowContext(ctx, query, args...)
	s.db.Logger.Trace(ctx, begin, func() (string, int64) { return query, -1 }, row.Err())
	return row
}
