package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/glebarez/sqlite"

	"github.com/linkslot/linkslot/internal/store"
)

// SQLite's writers take turns in the process.
//
// SQLite lets one connection write at a time. Every transaction here
// begins IMMEDIATE (it takes the write lock at BEGIN), and a connection
// that finds the lock taken is put to sleep by SQLite's busy handler, for
// 1, 2, 5, 10 … up to 100 ms at a time, until busy_timeout runs out. Under
// a crowd of writers the sleepers wake to find the lock taken again by a
// newcomer, so a few wait far longer than the line ahead of them, and the
// lock sits free while they sleep. With 16 workers rotating refresh
// tokens on the default 8 connections that was a p99 of 74–89 ms, against
// 20–22 ms when the pool had one connection (so nothing ever slept), with
// a fifth more of the process's CPU (BenchmarkRefreshRotation, sqlite, 2
// Dec 2026).
//
// So the store's connections to one database file take a write gate of
// that file, in the process, before SQLite's lock: a transaction from
// BEGIN to its end, and a write statement outside one (anything that does
// not begin with SELECT or EXPLAIN) until it is done. Waiting on the gate
// wakes a writer the moment the one before it finishes, and reads, which
// WAL mode serves beside a writer, never wait. Other processes on the same
// file (make run's two servers) still meet at SQLite's lock and its busy
// handler. A writer that cannot have the gate within the busy timeout gets
// the error SQLite's busy answer gets (store.ErrUnavailable), so a
// transaction that also writes on another connection fails as it did,
// rather than waiting for itself. A statement prepared on its own
// (database/sql's Prepare, which the store does not use) runs ungated, and
// meets SQLite's lock as before.

// writeGate lets one writer of a database file in at a time.
type writeGate struct{ turn chan struct{} }

// gates are the write gates by database file.
var gates = struct {
	sync.Mutex
	byPath map[string]*writeGate
}{byPath: map[string]*writeGate{}}

// gateFor returns the write gate of the database file at path.
func gateFor(path string) *writeGate {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	gates.Lock()
	defer gates.Unlock()
	g := gates.byPath[path]
	if g == nil {
		g = &writeGate{turn: make(chan struct{}, 1)}
		gates.byPath[path] = g
	}
	return g
}

// enter waits for the gate's turn, for ctx and at most wait (the store's
// busy timeout).
func (g *writeGate) enter(ctx context.Context, wait time.Duration) error {
	select {
	case g.turn <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: database is busy (no turn to write within %s)", store.ErrUnavailable, wait)
	}
}

func (g *writeGate) leave() { <-g.turn }

// writes reports whether a statement outside a transaction writes: every
// statement but those that begin with SELECT or EXPLAIN, after blanks and
// comments.
func writes(query string) bool {
	q := query
	for {
		q = strings.TrimLeft(q, " \t\r\n")
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return false // nothing but a comment
			}
			q = q[i+1:]
			continue
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return false
			}
			q = q[i+2:]
			continue
		}
		break
	}
	word := q
	if i := strings.IndexFunc(q, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }); i >= 0 {
		word = q[:i]
	}
	return !strings.EqualFold(word, "SELECT") && !strings.EqualFold(word, "EXPLAIN")
}

// sqliteDriver is the SQLite driver glebarez/sqlite registers.
func sqliteDriver() (driver.Driver, error) {
	db, err := sql.Open(sqlite.DriverName, "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Driver(), nil
}

// gatedConnector opens SQLite connections that take the gate to write.
type gatedConnector struct {
	drv  driver.Driver
	dsn  string
	gate *writeGate
	wait time.Duration // the busy timeout
}

func (c *gatedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ic, ok := conn.(innerConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlstore: a SQLite connection of type %T", conn)
	}
	return &gatedConn{inner: ic, gate: c.gate, wait: c.wait}, nil
}

func (c *gatedConnector) Driver() driver.Driver { return c.drv }

// innerConn is what SQLite's connections implement.
type innerConn interface {
	driver.Conn
	driver.Pinger
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

// gatedConn is a SQLite connection that takes the gate to write. A
// connection is used by one goroutine at a time (database/sql), so its
// fields need no lock.
type gatedConn struct {
	inner innerConn
	gate  *writeGate
	wait  time.Duration
	inTx  bool // holds the gate for its transaction
}

func (c *gatedConn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner.PrepareContext(ctx, query)
}

func (c *gatedConn) Close() error {
	err := c.inner.Close()
	if c.inTx {
		c.inTx = false
		c.gate.leave()
	}
	return err
}

func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *gatedConn) Ping(ctx context.Context) error {
	return c.inner.Ping(ctx)
}

func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.gate.enter(ctx, c.wait); err != nil {
		return nil, err
	}
	tx, err := c.inner.BeginTx(ctx, opts)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	c.inTx = true
	return &gatedTx{inner: tx, conn: c}, nil
}

func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.inTx || !writes(query) {
		return c.inner.ExecContext(ctx, query, args)
	}
	if err := c.gate.enter(ctx, c.wait); err != nil {
		return nil, err
	}
	defer c.gate.leave()
	return c.inner.ExecContext(ctx, query, args)
}

func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.inTx || !writes(query) {
		return c.inner.QueryContext(ctx, query, args)
	}
	// A write that answers rows (INSERT … RETURNING) holds SQLite's lock
	// until its rows are closed.
	if err := c.gate.enter(ctx, c.wait); err != nil {
		return nil, err
	}
	rows, err := c.inner.QueryContext(ctx, query, args)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	sr, ok := rows.(sqliteRows)
	if !ok {
		rows.Close()
		c.gate.leave()
		return nil, fmt.Errorf("sqlstore: SQLite rows of type %T", rows)
	}
	return &gatedRows{sqliteRows: sr, gate: c.gate}, nil
}

// gatedTx ends its transaction, then leaves the gate.
type gatedTx struct {
	inner driver.Tx
	conn  *gatedConn
}

func (t *gatedTx) Commit() error   { return t.end(t.inner.Commit) }
func (t *gatedTx) Rollback() error { return t.end(t.inner.Rollback) }

func (t *gatedTx) end(f func() error) error {
	err := f()
	if t.conn.inTx {
		t.conn.inTx = false
		t.conn.gate.leave()
	}
	return err
}

// sqliteRows is what SQLite's rows implement.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// gatedRows are a write's rows: closing them leaves the gate.
type gatedRows struct {
	sqliteRows
	gate *writeGate
	once sync.Once
}

func (r *gatedRows) Close() error {
	err := r.sqliteRows.Close()
	r.once.Do(r.gate.leave)
	return err
}
