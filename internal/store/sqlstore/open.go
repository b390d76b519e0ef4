// Package sqlstore implements store.Store with gorm on PostgreSQL
// (gorm.io/driver/postgres) and on an embedded, pure-Go SQLite
// (github.com/glebarez/sqlite, no cgo).
//
// Schema changes are SQL files in /migrations, applied with goose; gorm is
// used to map rows, never to create tables. Driver errors are translated into
// the store sentinels in one place (translate, errors.go).
//
// The statements every token request and every signed-in authorization
// sends (the prefetch, the token batch, the web session's account, the
// client with the person's link) are written with their placeholders
// already in the database's form and sent through the same pool or
// transaction past gorm's statement building (direct.go), which was a
// tenth of a refresh rotation's CPU, and on a PostgreSQL pool to pgx itself,
// past its database/sql adapter; they are traced through the same gorm
// logger as the rest.
//
// The no-overlap rule for confirmed bookings is enforced by PostgreSQL with an
// exclusion constraint over the buffer-padded range; SQLite has none, so every
// SQLite transaction begins IMMEDIATE (it takes the database write lock at
// BEGIN) and InsertBooking/UpdateBooking check for an overlap inside it. That
// serializes check-and-insert across goroutines and across processes sharing
// the file. In one process, writers take turns at the file's write gate
// before SQLite's lock (sqlitegate.go).
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/migrations"
)

// Options tune the connection pool. Zero values take the documented defaults.
type Options struct {
	// MaxOpenConns bounds the pool (default 16 on PostgreSQL, 8 on SQLite).
	MaxOpenConns int
	// MaxIdleConns defaults to MaxOpenConns.
	MaxIdleConns int
	// ConnMaxLifetime defaults to 30 minutes.
	ConnMaxLifetime time.Duration
	// StatementTimeout bounds each PostgreSQL statement (default 10s), so a
	// slow or stuck database answers with an error instead of hanging.
	StatementTimeout time.Duration
	// BusyTimeout is how long SQLite waits for the write lock (default 10s).
	BusyTimeout time.Duration
	// Logger receives slow-query and error logs (default slog.Default()).
	Logger *slog.Logger
}

// defaultBusyTimeout is Options.BusyTimeout's default.
const defaultBusyTimeout = 10 * time.Second

// Store is the gorm implementation of store.Store.
type Store struct {
	db      *gorm.DB
	dialect string
	// sqlDB is the pool, closed by Close; nil for a transaction-bound Store.
	sqlDB *sql.DB
	// idle is the pool's idle connection limit (Migrate resets it).
	idle int
}

var _ store.Store = (*Store)(nil)

// Dialect reports "postgres" or "sqlite".
func (s *Store) Dialect() string { return s.dialect }

// PoolSize returns the most connections the pool opens
// (LINKSLOT_DB_MAX_CONNS; 16 on PostgreSQL and 8 on SQLite by default), or 0
// for a transaction-bound Store. The authorization server sizes its
// admission gate from it (package admission).
func (s *Store) PoolSize() int {
	if s.sqlDB == nil {
		return 0
	}
	return s.sqlDB.Stats().MaxOpenConnections
}

// DB exposes the underlying gorm handle to tests and benchmarks.
func (s *Store) DB() *gorm.DB { return s.db }

// ParseURL validates a LINKSLOT_DATABASE_URL and returns its dialect and the
// driver DSN. "sqlite://" is followed by a file path (relative to the working
// folder, or absolute with a third slash); "postgres://" and "postgresql://"
// are passed to the PostgreSQL driver as they are.
func ParseURL(raw string, busy time.Duration) (dialect, dsn string, err error) {
	switch {
	case strings.HasPrefix(raw, "sqlite://"):
		path := strings.TrimPrefix(raw, "sqlite://")
		if q := strings.IndexByte(path, '?'); q >= 0 {
			return "", "", fmt.Errorf("database URL %q: SQLite URLs take no query parameters", raw)
		}
		if path == "" {
			return "", "", fmt.Errorf("database URL %q: no file path after sqlite:// (example: sqlite://var/linkslot.db)", raw)
		}
		if busy <= 0 {
			busy = defaultBusyTimeout
		}
		q := url.Values{}
		// busy_timeout first: the driver runs these pragmas in order on
		// every new connection, and journal_mode needs a lock that another
		// connection may be holding; without a busy timeout yet, it would
		// fail at once with SQLITE_BUSY.
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "synchronous(NORMAL)")
		// No _time_format: glebarez/go-sqlite v1.21 stops reading the DSN
		// after it, silently dropping _txlock (transactions then begin
		// DEFERRED and concurrent writers fail with SQLITE_BUSY). Its
		// default write format is the "sqlite" one anyway.
		q.Set("_txlock", "immediate")
		// The driver hands SQLite a "file:" URI, which would read '#' as a
		// fragment, %HH as an escape and a leading "//" as an authority:
		// escape them so that SQLite opens exactly the path.
		name := strings.NewReplacer("%", "%25", "#", "%23").Replace(path)
		if strings.HasPrefix(name, "/") {
			name = "//" + name // empty authority, then the absolute path
		}
		return "sqlite", "file:" + name + "?" + q.Encode(), nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		u, perr := url.Parse(raw)
		if perr != nil || u.Host == "" && u.Query().Get("host") == "" {
			return "", "", fmt.Errorf("database URL is not a valid postgres:// URL (example: postgres://user:pass@127.0.0.1:5432/linkslot)")
		}
		return "postgres", raw, nil
	case raw == "":
		return "", "", errors.New("database URL is empty (example: sqlite://var/linkslot.db)")
	}
	return "", "", fmt.Errorf("database URL must start with sqlite:// or postgres:// (got scheme %q)", schemeOf(raw))
}

// withPostgresDefaults adds a connect timeout and a statement timeout (sent as
// run-time parameters at connect, so every pooled connection has them) unless
// the URL sets its own.
func withPostgresDefaults(dsn string, statement time.Duration) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", "5")
	}
	if q.Get("statement_timeout") == "" {
		if statement <= 0 {
			statement = 10 * time.Second
		}
		q.Set("statement_timeout", fmt.Sprint(statement.Milliseconds()))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func schemeOf(raw string) string {
	if i := strings.Index(raw, "://"); i > 0 {
		return raw[:i]
	}
	return ""
}

// Open connects to the database named by a LINKSLOT_DATABASE_URL and checks
// that it answers. It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	dialect, dsn, err := ParseURL(rawURL, opts.BusyTimeout)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg := &gorm.Config{
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
		Logger:                 newGormLogger(log),
		NowFunc:                store.SystemClock,
	}
	var dialector gorm.Dialector
	maxOpen := opts.MaxOpenConns
	switch dialect {
	case "sqlite":
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("database folder %s: %w", dir, err)
			}
		}
		if err := registerSQLiteFuncs(); err != nil {
			return nil, fmt.Errorf("register SQLite functions: %w", err)
		}
		drv, err := sqliteDriver()
		if err != nil {
			return nil, err
		}
		busy := opts.BusyTimeout
		if busy <= 0 {
			busy = defaultBusyTimeout
		}
		// Writers take turns at the file's write gate (sqlitegate.go).
		dialector = sqlite.Dialector{Conn: sql.OpenDB(&gatedConnector{drv: drv, dsn: dsn, gate: gateFor(path), wait: busy})}
		if maxOpen <= 0 {
			maxOpen = 8
		}
	case "postgres":
		dialector = postgres.New(postgres.Config{DSN: withPostgresDefaults(dsn, opts.StatementTimeout)})
		if maxOpen <= 0 {
			maxOpen = 16
		}
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		// The PostgreSQL dialector connects while it initializes, so an
		// unreachable server fails here, not at the ping below.
		return nil, connectErr(dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	idle := opts.MaxIdleConns
	if idle <= 0 {
		idle = maxOpen
	}
	life := opts.ConnMaxLifetime
	if life <= 0 {
		life = 30 * time.Minute
	}
	sqlDB.SetMaxOpenConns(maxOpen)
	sqlDB.SetMaxIdleConns(idle)
	sqlDB.SetConnMaxLifetime(life)
	s := &Store{db: db, dialect: dialect, sqlDB: sqlDB, idle: idle}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pctx); err != nil {
		sqlDB.Close()
		return nil, connectErr(dialect, err)
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() error {
	if s.sqlDB == nil {
		return nil
	}
	return s.sqlDB.Close()
}

// SQL returns the pool (for stats and tests).
func (s *Store) SQL() *sql.DB { return s.sqlDB }

// Migrate applies every pending migration of the store's dialect and reports
// how many it applied.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	p, err := s.goose()
	if err != nil {
		return 0, err
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migration failed: %w", err)
	}
	s.dropIdle(len(res))
	return len(res), nil
}

// dropIdle closes the pool's idle connections after applied migrations: a
// connection opened before them may hold statements prepared against the
// old shape of a table (PostgreSQL answers "cached plan must not change
// result type" once a migration adds a column, as 00022 does to bookings).
func (s *Store) dropIdle(applied int) {
	if applied == 0 || s.sqlDB == nil || s.idle <= 0 {
		return
	}
	s.sqlDB.SetMaxIdleConns(0)
	s.sqlDB.SetMaxIdleConns(s.idle)
}

// MigrateTo applies pending migrations up to and including version (tests
// of upgrades start from an older schema with it).
func (s *Store) MigrateTo(ctx context.Context, version int64) (int, error) {
	p, err := s.goose()
	if err != nil {
		return 0, err
	}
	res, err := p.UpTo(ctx, version)
	if err != nil {
		return len(res), fmt.Errorf("migration failed: %w", err)
	}
	s.dropIdle(len(res))
	return len(res), nil
}

// MigrationsCurrent reports whether every embedded migration is applied.
func (s *Store) MigrationsCurrent(ctx context.Context) (bool, error) {
	p, err := s.goose()
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, translate(err)
	}
	return !pending, nil
}

func (s *Store) goose() (*goose.Provider, error) {
	fsys, err := migrations.FS(s.dialect)
	if err != nil {
		return nil, err
	}
	d := goose.DialectPostgres
	if s.dialect == "sqlite" {
		d = goose.DialectSQLite3
	}
	return goose.NewProvider(d, s.sqlDB, fsys)
}

// Ping reports whether the database answers and the schema is current.
func (s *Store) Ping(ctx context.Context) error {
	db := s.sqlDB
	if db == nil {
		return nil
	}
	if err := db.PingContext(ctx); err != nil {
		return translate(err)
	}
	ok, err := s.MigrationsCurrent(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("database schema is not current: run the migrate command")
	}
	return nil
}

// InTx runs fn inside one transaction.
func (s *Store) InTx(ctx context.Context, fn func(store.Store) error) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&Store{db: tx, dialect: s.dialect})
	})
	return translate(err)
}

// Begin implements store.Store: a transaction begun on one pooled
// connection, bound to ctx (database/sql rolls it back when ctx ends
// first). On SQLite it takes the write lock at BEGIN, like InTx.
func (s *Store) Begin(ctx context.Context) (store.Tx, error) {
	if s.sqlDB == nil {
		return nil, errors.New("sqlstore: Begin inside a transaction")
	}
	db := s.db.WithContext(ctx).Begin()
	if db.Error != nil {
		return nil, translate(db.Error)
	}
	return &txStore{Store: Store{db: db, dialect: s.dialect}}, nil
}

// txStore is a Store bound to a transaction begun by Begin.
type txStore struct {
	Store
	mu    sync.Mutex
	ended bool
}

var _ store.Tx = (*txStore)(nil)

// Commit implements store.Tx.
func (t *txStore) Commit() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return errors.New("sqlstore: transaction already ended")
	}
	t.ended = true
	return translate(t.db.Commit().Error)
}

// Rollback implements store.Tx; after Commit or Rollback it does nothing.
func (t *txStore) Rollback() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil
	}
	t.ended = true
	err := t.db.Rollback().Error
	if errors.Is(err, sql.ErrTxDone) {
		return nil // rolled back already: its context ended
	}
	return translate(err)
}

// tx runs fn in a transaction (a savepoint when already inside one).
func (s *Store) tx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return translate(s.db.WithContext(ctx).Transaction(fn))
}

func (s *Store) q(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// openError is a connection failure: one line, password redacted, and
// errors.Is(err, store.ErrUnavailable) when the database could not be
// reached (as opposed to, say, a refused password).
type openError struct {
	msg         string
	unavailable bool
}

func (e *openError) Error() string { return e.msg }

func (e *openError) Unwrap() error {
	if e.unavailable {
		return store.ErrUnavailable
	}
	return nil
}

func connectErr(dialect string, err error) error {
	msg := strings.ReplaceAll(redactErr(err).Error(), "\n", " ")
	return &openError{
		msg:         fmt.Sprintf("cannot connect to the %s database: %s", dialect, msg),
		unavailable: errors.Is(translate(err), store.ErrUnavailable),
	}
}
