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

// TestBatchedRotation runs fosite's refresh sequence (BeginTX, rotate,
// create access and refresh sessions, Commit) concurrently on one refresh
// token: exactly one commits; every loser's Commit answers
// fosite.ErrInactiveToken, a Rollback after it is a no-op, and none of the
// losers' sessions exist.
func TestBatchedRotation(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := f.fs.Begin(context.Background())
		for round := 0; round < 5; round++ {
			sig := store.RandomString(16)
			r := f.request(t)
			if err := f.fs.CreateRefreshTokenSession(ctx, sig, "", r); err != nil {
				t.Fatal(err)
			}
			type issued struct{ access, refresh string }
			out := make(chan issued, 8)
			wins := race(8, func() error {
				ctx := f.fs.Begin(context.Background())
				if _, err := f.fs.GetRefreshTokenSession(ctx, sig, fositestore.NewSession()); err != nil {
					return err
				}
				tctx, err := f.fs.BeginTX(ctx)
				if err != nil {
					return err
				}
				is := issued{store.RandomString(16), store.RandomString(16)}
				out <- is
				if err := f.fs.RotateRefreshToken(tctx, r.ID, sig); err != nil {
					return err
				}
				if err := f.fs.CreateAccessTokenSession(tctx, is.access, r); err != nil {
					return err
				}
				if err := f.fs.CreateRefreshTokenSession(tctx, is.refresh, is.access, r); err != nil {
					return err
				}
				err = f.fs.Commit(tctx)
				if rerr := f.fs.Rollback(tctx); rerr != nil {
					t.Errorf("rollback after commit: %v", rerr)
				}
				return err
			}, fosite.ErrInactiveToken, t)
			if wins != 1 {
				t.Fatalf("round %d: %d rotations committed, want 1", round, wins)
			}
			close(out)
			found := 0
			for is := range out {
				_, errA := f.fs.GetAccessTokenSession(ctx, is.access, fositestore.NewSession())
				_, errR := f.fs.GetRefreshTokenSession(ctx, is.refresh, fositestore.NewSession())
				if (errA == nil) != (errR == nil) {
					t.Fatalf("round %d: half a batch written: %v / %v", round, errA, errR)
				}
				if errA == nil {
					found++
				}
			}
			if found != 1 {
				t.Fatalf("round %d: %d issued pairs stored, want 1", round, found)
			}
		}
	})
}

// TestBatchThenRead: a read inside the transaction after batched writes
// turns it into a database transaction that sees them; a rollback then
// discards them, and a code redeemed twice in batches fails the second time.
func TestBatchThenRead(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		for _, commit := range []bool{true, false} {
			sig := store.RandomString(16)
			tctx, err := f.fs.BeginTX(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.fs.CreateAccessTokenSession(tctx, sig, f.request(t)); err != nil {
				t.Fatal(err)
			}
			if _, err := f.fs.GetAccessTokenSession(tctx, sig, fositestore.NewSession()); err != nil {
				t.Fatalf("read inside the transaction: %v", err)
			}
			if commit {
				err = f.fs.Commit(tctx)
			} else {
				err = f.fs.Rollback(tctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.fs.GetAccessTokenSession(ctx, sig, fositestore.NewSession())
			if commit != (err == nil) {
				t.Fatalf("commit=%v: after the end: %v", commit, err)
			}
		}
		code := store.RandomString(16)
		if err := f.fs.CreateAuthorizeCodeSession(ctx, code, f.request(t)); err != nil {
			t.Fatal(err)
		}
		for i, want := range []error{nil, fosite.ErrInvalidatedAuthorizeCode} {
			tctx, err := f.fs.BeginTX(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.fs.InvalidateAuthorizeCodeSession(tctx, code); err != nil {
				t.Fatal(err)
			}
			if err := f.fs.Commit(tctx); !errors.Is(err, want) && err != want {
				t.Fatalf("redemption %d: %v, want %v", i+1, err, want)
			}
		}
		tctx, _ := f.fs.BeginTX(ctx)
		if err := f.fs.RotateRefreshToken(tctx, "", store.RandomString(16)); err != nil {
			t.Fatal(err)
		}
		if err := f.fs.Commit(tctx); !errors.Is(err, fosite.ErrNotFound) {
			t.Fatalf("unknown refresh token: %v, want not found", err)
		}
	})
}
