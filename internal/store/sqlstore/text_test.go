package sqlstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestInvalidTextSQLSTATEs: the SQLSTATEs of text PostgreSQL cannot
// represent come out as store.ErrInvalidText, not as a driver error.
func TestInvalidTextSQLSTATEs(t *testing.T) {
	s := sqltest.Postgres(t)
	for _, code := range []string{"22021", "22P05"} {
		err := s.InTx(context.Background(), func(tx store.Store) error {
			return tx.(*sqlstore.Store).DB().Exec("DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '" + code + "'; END $$").Error
		})
		if !errors.Is(err, store.ErrInvalidText) {
			t.Errorf("SQLSTATE %s: InTx = %v, want ErrInvalidText", code, err)
		}
	}
}

// TestNULInText: U+0000 in a lookup is ErrInvalidText on PostgreSQL (which
// cannot hold it in text) and simply matches nothing on SQLite.
func TestNULInText(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		_, err := s.GetAccountByEmail(context.Background(), "a\x00b@example.com")
		want := store.ErrNotFound
		if s.Dialect() == "postgres" {
			want = store.ErrInvalidText
		}
		if !errors.Is(err, want) {
			t.Errorf("GetAccountByEmail with NUL = %v, want %v", err, want)
		}
	})
}
