// Package sqltest gives tests fresh, migrated sqlstore stores on SQLite and
// PostgreSQL: the backends the conformance suite (store/storetest) runs on,
// and the real databases every other package's tests use.
//
// PostgreSQL tests use the server named by LINKSLOT_TEST_POSTGRES_URL (make
// test starts a throwaway one when initdb is on the PATH); each store gets a
// database of its own, dropped when the test ends. Without the variable the
// PostgreSQL cases are skipped, except under CI=true, where they fail.
package sqltest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// EnvPostgresURL names the admin URL of the test PostgreSQL server.
const EnvPostgresURL = "LINKSLOT_TEST_POSTGRES_URL"

// Backend opens a fresh, migrated store.
type Backend struct {
	Name string // "sqlite" or "postgres"
	Open func(t testing.TB) *sqlstore.Store
}

// Backends lists every backend: SQLite always, PostgreSQL when configured.
func Backends() []Backend {
	return []Backend{{"sqlite", SQLite}, {"postgres", Postgres}}
}

// Each runs fn as a subtest on every backend ("sqlite", "postgres").
func Each(t *testing.T, fn func(t *testing.T, s *sqlstore.Store)) {
	t.Helper()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t)) })
	}
}

// SQLite returns a migrated store on a new file in the test's temp folder.
func SQLite(t testing.TB) *sqlstore.Store {
	t.Helper()
	return SQLiteWith(t, sqlstore.Options{})
}

// SQLiteWith is SQLite with the given pool options.
func SQLiteWith(t testing.TB, opts sqlstore.Options) *sqlstore.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "linkslot.db")
	return openMigrated(t, "sqlite://"+path, opts)
}

// PostgresURL returns the admin URL, skipping (or failing under CI) when
// none is configured.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvPostgresURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI requires the PostgreSQL tests (make test starts a server when initdb is on the PATH)", EnvPostgresURL)
		}
		t.Skipf("PostgreSQL not configured (%s); make test starts one when initdb is on the PATH", EnvPostgresURL)
	}
	return u
}

// NewPostgresDatabase creates an empty database for the test and returns its
// URL; the database is dropped when the test ends.
func NewPostgresDatabase(t testing.TB) string {
	t.Helper()
	return newPostgresDatabase(t, "")
}

// newPostgresDatabase creates a database, a copy of template when one is
// named, and drops it when the test ends.
func newPostgresDatabase(t testing.TB, template string) string {
	t.Helper()
	admin := PostgresURL(t)
	name := "t_" + strings.ReplaceAll(store.RandomString(8), "-", "")
	ctx := context.Background()
	a, err := sqlstore.Open(ctx, admin, sqlstore.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if err := a.DB().Exec(create).Error; err != nil {
		a.Close()
		t.Fatalf("create database: %v", err)
	}
	a.Close()
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	t.Cleanup(func() {
		a, err := sqlstore.Open(ctx, admin, sqlstore.Options{MaxOpenConns: 1})
		if err != nil {
			return
		}
		defer a.Close()
		a.DB().Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	return u.String()
}

// Postgres returns a migrated store on a database of its own.
func Postgres(t testing.TB) *sqlstore.Store {
	t.Helper()
	return PostgresWith(t, sqlstore.Options{})
}

// PostgresWith is Postgres with pool options. The database is a copy of a
// migrated template (see template.go); Migrate then finds nothing to do.
func PostgresWith(t testing.TB, opts sqlstore.Options) *sqlstore.Store {
	t.Helper()
	tmpl, err := migratedTemplate(PostgresURL(t))
	if err != nil {
		t.Fatalf("build the migrated template database: %v", err)
	}
	return openMigrated(t, newPostgresDatabase(t, tmpl), opts)
}

func openMigrated(t testing.TB, rawURL string, opts sqlstore.Options) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, rawURL, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// MustURL is the database URL of a fresh backend, for tests that start
// servers as separate processes or through configuration.
func MustURL(t testing.TB, backend string) string {
	t.Helper()
	switch backend {
	case "sqlite":
		return "sqlite://" + filepath.Join(t.TempDir(), "linkslot.db")
	case "postgres":
		return NewPostgresDatabase(t)
	}
	panic(fmt.Sprintf("sqltest: unknown backend %q", backend))
}
