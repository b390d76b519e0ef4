package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
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

// Scanner is one row of a statement's answer: database/sql's rows and
// pgx's alike.
type Scanner interface{ Scan(dest ...any) error }

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// direct sends a statement whose placeholders s.binder wrote past gorm's
// statement building (Each), to the store's pool or to its transaction.
// gorm copies a statement's text byte by byte to number its placeholders
// and runs its callbacks around it; for the two statements of a refresh
// rotation (PrefetchStatement and TokenBatchStatement) that was 9% of the
// rotation's process CPU: 779 against 708 µs in eight alternating runs of
// BenchmarkRefreshRotation on PostgreSQL. The statements of the token
// paths and of a signed-in authorization go this way; the rest of the
// store is gorm's. A statement is traced through gorm's logger as gorm
// traces one, so slow ones are logged alike and tests can count them.
func (s *Store) direct(ctx context.Context, query string, args []any, each func(Scanner) error) error {
	begin := time.Now()
	q, ok := s.db.Statement.ConnPool.(Querier)
	if !ok {
		return fmt.Errorf("sqlstore: a connection pool of type %T", s.db.Statement.ConnPool)
	}
	err := Each(ctx, q, query, args, each)
	s.db.Logger.Trace(ctx, begin, func() (string, int64) { return query, -1 }, err)
	return err
}

// directRow is direct for a statement that answers one row, scanned into
// dest; a statement that answers none gives sql.ErrNoRows.
func (s *Store) directRow(ctx context.Context, query string, args []any, dest ...any) error {
	found := false
	err := s.direct(ctx, query, args, func(r Scanner) error {
		if found {
			return nil // only the first row counts, as with QueryRow
		}
		found = true
		return r.Scan(dest...)
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// Each sends query with args on q and calls each for every row of the
// answer, in order, until each answers an error.
//
// On a PostgreSQL pool (pgx's database/sql driver) the statement goes to
// pgx itself, on a connection of that pool (database/sql's Conn.Raw), not
// through pgx's database/sql adapter: the adapter builds a conversion
// function for every column of every answer, and database/sql converts
// every value once more. For a refresh rotation that was 5% of the
// process's CPU and 67 of its 815 allocations (docs/performance.md, "The
// driver under the token statements"). In a transaction, and on SQLite,
// the statement goes through database/sql. Exported for the benchmarks'
// floor program (bench), which sends the product's statements the same
// way.
func Each(ctx context.Context, q Querier, query string, args []any, each func(Scanner) error) error {
	if db, ok := q.(*sql.DB); ok {
		if _, pgx := db.Driver().(*stdlib.Driver); pgx {
			return eachPgx(ctx, db, query, args, each)
		}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := eachRow(rows, each); err != nil {
		return err
	}
	return rows.Close()
}

// eachPgx is Each on a connection of db, through pgx.
func eachPgx(ctx context.Context, db *sql.DB, query string, args []any, each func(Scanner) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("sqlstore: a PostgreSQL connection of type %T", dc)
		}
		return EachOn(ctx, c.Conn(), query, args, each)
	})
}

// PgxQuerier is a *pgx.Conn or a pgx.Tx.
type PgxQuerier interface {
	Query(ctx context.Context, query string, args ...any) (pgx.Rows, error)
}

// EachOn is Each on pgx itself, on a connection or in a transaction of
// pgx's. Exported for the floor program, whose floor in one transaction
// runs it on pgx.
func EachOn(ctx context.Context, q PgxQuerier, query string, args []any, each func(Scanner) error) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, each)
}

// eachRow calls each for every row of rows (pgx's or database/sql's), then
// answers the first error.
func eachRow(rows interface {
	Scanner
	Next() bool
	Err() error
}, each func(Scanner) error) error {
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
