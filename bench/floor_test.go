package main

import (
	"context"
	"testing"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestFloorsDoTheProductsWorkOnPostgres holds the two floors the bench
// measures the token paths against to the product's storage on
// PostgreSQL: each operation of a floor must succeed on a system the
// people signed in to, and leave the rows the product's would — a
// redeemed code and an active access and refresh token of its request for
// the code flow, one active refresh token a chain for the rotation — so
// that a change to the product's statements that the floors no longer
// match fails here, not as a bench report full of failures.
func TestFloorsDoTheProductsWorkOnPostgres(t *testing.T) {
	pgURL := sqltest.PostgresURL(t)
	ctx := context.Background()
	sys, err := newSystem(ctx, "postgres", t.TempDir(), pgURL, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, err := signInAll(ctx, sys, 2); err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) int {
		var n int
		if err := sys.store.SQL().QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	cf, err := newCodeFloor(ctx, withAppName(sys.dsn, "test-code-floor"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	codes := count(`SELECT count(*) FROM token_sessions WHERE kind = $1`, string(store.KindAuthorizeCode))
	const flows = 5
	for i := range flows {
		if err := cf.flow(ctx, i); err != nil {
			t.Fatalf("code floor, flow %d: %v", i, err)
		}
	}
	if n := count(`SELECT count(*) FROM token_sessions WHERE kind = $1`, string(store.KindAuthorizeCode)) - codes; n != flows {
		t.Errorf("code floor: %d new codes in %d flows, want %d", n, flows, flows)
	}
	// Every floor code is redeemed, and its request holds one active
	// access token and one active refresh token, as a product flow's does.
	if n := count(`SELECT count(*) FROM token_sessions c WHERE c.kind = $1 AND c.created_at >= now() - interval '1 minute' AND c.active`,
		string(store.KindAuthorizeCode)); n != 0 {
		t.Errorf("code floor: %d codes left unredeemed", n)
	}
	if n := count(`SELECT count(*) FROM token_sessions c WHERE c.kind = $1 AND c.link_id = $2 AND NOT c.active
AND (SELECT count(*) FROM token_sessions t WHERE t.request_id = c.request_id AND t.active AND t.kind IN ($3, $4)) = 2`,
		string(store.KindAuthorizeCode), cf.code.LinkID, string(store.KindAccessToken), string(store.KindRefreshToken)); n < flows {
		t.Errorf("code floor: %d redeemed codes with an active access and refresh token, want at least %d", n, flows)
	}

	for _, inTx := range []bool{false, true} {
		f, err := newFloor(ctx, withAppName(sys.dsn, "test-floor"), 4, 2, true, inTx)
		if err != nil {
			t.Fatal(err)
		}
		before := f.chains[0]
		for i := range 3 {
			if err := f.rotate(ctx, 0); err != nil {
				t.Fatalf("floor (in a transaction: %v), rotation %d: %v", inTx, i, err)
			}
		}
		if f.chains[0] == before {
			t.Errorf("floor (in a transaction: %v): the chain did not move", inTx)
		}
		if n := count(`SELECT count(*) FROM token_sessions WHERE kind = $1 AND signature_hash = $2 AND active`,
			string(store.KindRefreshToken), f.hash(f.chains[0])); n != 1 {
			t.Errorf("floor (in a transaction: %v): the chain's current refresh token is in %d active rows, want 1", inTx, n)
		}
		if _, _, err := f.exchange(ctx, before); err == nil {
			t.Errorf("floor (in a transaction: %v): a spent refresh token rotated again", inTx)
		}
		f.Close()
	}
}
