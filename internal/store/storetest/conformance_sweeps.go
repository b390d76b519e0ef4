package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// testSweepAccountTokens: the e-mail link sweep deletes only links expired
// before the cut-off, used or not, at most limit at a time.
func testSweepAccountTokens(t *testing.T, s store.Store) {
	sw, ok := s.(store.Sweeps)
	if !ok {
		t.Fatalf("%T does not implement store.Sweeps", s)
	}
	a := newAccount(t, s, "sweeps@example.com")
	for i := range 3 {
		tok := store.AccountToken{TokenHash: fmt.Sprintf("sweep-old-%d", i), AccountID: a.ID, Purpose: store.TokenResetPassword,
			Email: a.Email, CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute)}
		must(t, s.CreateAccountToken(ctx, tok))
	}
	must(t, s.UseAccountToken(ctx, "sweep-old-0", t0.Add(time.Minute)))
	must(t, s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "sweep-live", AccountID: a.ID, Purpose: store.TokenVerifyEmail,
		Email: a.Email, CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}))

	cut := t0.Add(time.Hour)
	for _, want := range []int64{2, 1, 0} {
		n, err := sw.SweepAccountTokens(ctx, cut, 2)
		must(t, err)
		if n != want {
			t.Fatalf("SweepAccountTokens batch deleted %d, want %d", n, want)
		}
	}
	for i := range 3 {
		if _, err := s.GetAccountToken(ctx, fmt.Sprintf("sweep-old-%d", i)); err == nil {
			t.Errorf("expired e-mail link %d survived the sweep", i)
		}
	}
	if _, err := s.GetAccountToken(ctx, "sweep-live"); err != nil {
		t.Errorf("the sweep removed a live e-mail link: %v", err)
	}
}
