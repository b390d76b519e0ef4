package sqlstore_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestRaisedErrors makes PostgreSQL itself raise each SQLSTATE the store
// translates, inside InTx, and checks the sentinel that comes out.
func TestRaisedErrors(t *testing.T) {
	s := sqltest.Postgres(t)
	for code, want := range map[string]error{
		"23505": store.ErrAlreadyExists,
		"23P01": store.ErrOverlap,
		"40001": store.ErrRetry,
		"40P01": store.ErrRetry,
		"57014": store.ErrUnavailable,
	} {
		err := s.InTx(context.Background(), func(tx store.Store) error {
			return tx.(*sqlstore.Store).DB().Exec("DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '" + code + "'; END $$").Error
		})
		if !errors.Is(err, want) {
			t.Errorf("SQLSTATE %s: InTx = %v, want %v", code, err, want)
		}
	}
}

// TestSerializationFailure provokes a real serialization failure: two
// SERIALIZABLE transactions each read what the other writes.
func TestSerializationFailure(t *testing.T) {
	s := sqltest.Postgres(t)
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := s.CreateAccount(ctx, store.Account{ID: id, Email: id + "@example.com", CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	read := make(chan struct{}, 2)
	proceed := make(chan struct{})
	errs := make(chan error, 2)
	for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
		go func() {
			errs <- s.InTx(ctx, func(tx store.Store) error {
				db := tx.(*sqlstore.Store).DB()
				if err := db.Exec("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").Error; err != nil {
					return err
				}
				var n int64
				if err := db.Raw("SELECT count(*) FROM accounts WHERE id = ? AND admin", pair[0]).Scan(&n).Error; err != nil {
					return err
				}
				read <- struct{}{}
				<-proceed
				return db.Exec("UPDATE accounts SET admin = true WHERE id = ?", pair[1]).Error
			})
		}()
	}
	<-read
	<-read
	close(proceed)
	e1, e2 := <-errs, <-errs
	if !(e1 == nil && errors.Is(e2, store.ErrRetry) || e2 == nil && errors.Is(e1, store.ErrRetry)) {
		t.Fatalf("write skew: errors %v and %v, want one nil and one ErrRetry", e1, e2)
	}
}

// TestSQLiteBusy: a writer that cannot get the lock within the busy timeout
// gets ErrUnavailable.
func TestSQLiteBusy(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "busy.db")
	a, err := sqlstore.Open(ctx, url, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := sqlstore.Open(ctx, url, sqlstore.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- a.InTx(ctx, func(tx store.Store) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	err = b.CreateAccount(ctx, store.Account{ID: "x", Email: "x@example.com", CreatedAt: time.Now(), UpdatedAt: time.Now()})
	close(release)
	if e := <-done; e != nil {
		t.Fatal(e)
	}
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write while another process holds the lock = %v, want ErrUnavailable", err)
	}
}

// TestOpenErrors: a malformed URL and an unreachable server each give one
// clear line that names the problem and never the password.
func TestOpenErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	const secret = "s3cr3t-pw"
	for _, tc := range []struct {
		name, url, want string
	}{
		{"empty", "", "empty"},
		{"unknown scheme", "mysql://root:" + secret + "@db/x", "must start with sqlite:// or postgres://"},
		{"malformed postgres", "postgres://alice:" + secret + "@[::1/linkslot", "not a valid postgres:// URL"},
		{"no host", "postgres:///linkslot", "not a valid postgres:// URL"},
		{"sqlite query", "sqlite://var/x.db?mode=ro", "no query parameters"},
		{"sqlite no path", "sqlite://", "no file path"},
		{"unreachable", "postgres://alice:" + secret + "@" + closed + "/linkslot?sslmode=disable&connect_timeout=2", "cannot connect to the postgres database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := sqlstore.Open(ctx, tc.url, sqlstore.Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error %q contains the password", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is more than one line", msg)
			}
			if tc.name == "unreachable" && !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("unreachable: %v is not ErrUnavailable", err)
			}
		})
	}
}

// TestClosedStore: a closed pool answers errors, not panics, and Ping
// reports it.
func TestClosedStore(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		s.Close()
		if err := s.Ping(context.Background()); err == nil {
			t.Fatal("Ping on a closed store succeeded")
		}
		if _, err := s.GetAccount(context.Background(), "x"); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetAccount on a closed store = %v, want an error other than not found", err)
		}
	})
}

// TestSchemaNotCurrent: Ping fails on an unmigrated database.
func TestSchemaNotCurrent(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s, err := sqlstore.Open(context.Background(), sqltest.MustURL(t, backend), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Ping(context.Background()); err == nil {
				t.Fatal("Ping on an unmigrated database succeeded")
			}
			ok, err := s.MigrationsCurrent(context.Background())
			if err != nil || ok {
				t.Fatalf("MigrationsCurrent = %v, %v; want false", ok, err)
			}
		})
	}
}
