package fositestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ory/fosite"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func TestTransactional(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		get := func(sig string) error {
			_, err := f.fs.GetAccessTokenSession(ctx, sig, fositestore.NewSession())
			return err
		}
		tests := []struct {
			name   string
			commit bool
			nested bool
		}{
			{"commit", true, false},
			{"rollback", false, false},
			{"nested joins the outer commit", true, true},
			{"nested joins the outer rollback", false, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sig := store.RandomString(16)
				tctx, err := f.fs.BeginTX(ctx)
				if err != nil {
					t.Fatal(err)
				}
				wctx := tctx
				if tt.nested {
					if wctx, err = f.fs.BeginTX(tctx); err != nil {
						t.Fatal(err)
					}
				}
				if err := f.fs.CreateAccessTokenSession(wctx, sig, f.request(t)); err != nil {
					t.Fatal(err)
				}
				if tt.nested { // the inner end does nothing by itself
					if err := f.fs.Commit(wctx); err != nil {
						t.Fatal(err)
					}
				}
				if tt.commit {
					err = f.fs.Commit(tctx)
				} else {
					err = f.fs.Rollback(tctx)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := f.fs.Rollback(tctx); err != nil { // after the end: no-op
					t.Fatal(err)
				}
				err = get(sig)
				if tt.commit && err != nil || !tt.commit && !errors.Is(err, fosite.ErrNotFound) {
					t.Fatalf("after %s: %v", tt.name, err)
				}
			})
		}
	})
}
