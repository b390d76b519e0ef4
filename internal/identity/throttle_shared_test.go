package identity_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestThrottleShared: two services on one database — two replicas —
// count one set of failures when the throttle keeps them in the rate
// windows: the limit for the account at one address is reached after 5
// failures in all, not 5 on each; the wait doubles; a correct password
// clears that address's failures for the account on every replica.
func TestThrottleShared(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		replicas := sharedReplicas(t, s, clk, 2)
		if _, err := replicas[0].SignUp(ctx, "ada@example.com", pw); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7"); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("failure %d: %v", i, err)
			}
		}
		for i, svc := range replicas {
			if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); !throttledFor(err, time.Minute) {
				t.Fatalf("replica %d after 5 failures in all: %v, want a 1 min wait", i, err)
			}
		}
		clk.Advance(time.Minute)
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Fatalf("after the wait: %v", err)
		}
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); !throttledFor(err, 2*time.Minute) {
			t.Fatalf("sixth failure: %v, want the wait doubled to 2 min", err)
		}
		clk.Advance(2 * time.Minute)
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); err != nil {
			t.Fatalf("correct password after the wait: %v", err)
		}
		// The success cleared the account's failures for both replicas.
		for i := range 4 {
			replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.9")
		}
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", pw, "198.51.100.9"); err != nil {
			t.Fatalf("4 failures after a success throttled: %v", err)
		}
	})
}

// TestThrottleSharedPerAddress: the per-address limit counts failures for
// any account, across replicas, and leaves other addresses alone.
func TestThrottleSharedPerAddress(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		var replicas []*identity.Service
		for range 3 {
			svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{}, RateWindows: s,
				Throttle: identity.ThrottlePolicy{AddressLimit: 6}})
			if err != nil {
				t.Fatal(err)
			}
			replicas = append(replicas, svc)
		}
		replicas[0].SignUp(ctx, "ada@example.com", pw)
		for i := range 6 {
			replicas[i%3].Authenticate(ctx, "guess"+string(rune('a'+i))+"@example.com", "nope nope nope", "203.0.113.9")
		}
		for i, svc := range replicas {
			if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "203.0.113.9"); !errors.Is(err, identity.ErrThrottled) {
				t.Fatalf("replica %d: address not throttled after 6 failures across replicas: %v", i, err)
			}
		}
		if _, err := replicas[2].Authenticate(ctx, "ada@example.com", pw, "198.51.100.1"); err != nil {
			t.Fatalf("another address was throttled: %v", err)
		}
		// 15 minutes later the failures left the window.
		clk.Advance(15*time.Minute + time.Second)
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", pw, "203.0.113.9"); err != nil {
			t.Fatalf("window did not slide: %v", err)
		}
	})
}

// throttledFor reports whether err is ErrThrottled with a wait of want.
func throttledFor(err error, want time.Duration) bool {
	wait, ok := identity.RetryAfter(err)
	return ok && wait == want
}

// sharedReplicas returns n services on s that keep the throttle in its rate
// windows, as replicas on one database do.
func sharedReplicas(t *testing.T, s *sqlstore.Store, clk *fakeClock, n int) []*identity.Service {
	t.Helper()
	var out []*identity.Service
	for range n {
		svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{}, RateWindows: s})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, svc)
	}
	return out
}

// TestThrottleOwnerNotLockedOut: 50 failures from other addresses — 5 from
// each of 10, and 50 attempts from one more — never make the owner's right
// password wait at an address of their own; 5 failures from that address
// do (docs/reference.md §12).
func TestThrottleOwnerNotLockedOut(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		replicas := sharedReplicas(t, s, clk, 2)
		if _, err := replicas[0].SignUp(ctx, "ada@example.com", pw); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			addr := fmt.Sprintf("203.0.113.%d", i/5)
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", addr); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("failure %d from %s: %v", i, addr, err)
			}
		}
		for i := range 50 {
			_, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "192.0.2.66")
			if !errors.Is(err, identity.ErrInvalidCredentials) && !errors.Is(err, identity.ErrThrottled) {
				t.Fatalf("attempt %d from one address: %v", i, err)
			}
		}
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", "nope nope nope", "192.0.2.66"); !errors.Is(err, identity.ErrThrottled) {
			t.Fatalf("the guessing address is not held: %v", err)
		}
		for i, svc := range replicas {
			if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); err != nil {
				t.Fatalf("replica %d: the owner's right password after 100 attempts from other addresses: %v", i, err)
			}
		}
		// The owner's own address is held after 5 failures from it.
		for i := range 5 {
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7"); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("own failure %d: %v", i, err)
			}
		}
		for i, svc := range replicas {
			if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); !throttledFor(err, time.Minute) {
				t.Fatalf("replica %d after 5 own failures: %v, want a 1 min wait", i, err)
			}
		}
		clk.Advance(time.Minute)
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); err != nil {
			t.Fatalf("own right password after the wait: %v", err)
		}
	})
}

// TestThrottleAccountCeiling: guessing at one account from many addresses.
// Past AccountCeiling failures in all, an address that has failed for the
// account waits after its next failure — one guess per address, not five —
// while an address with none is admitted, so the owner still gets in.
func TestThrottleAccountCeiling(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		replicas := sharedReplicas(t, s, clk, 2)
		replicas[0].SignUp(ctx, "ada@example.com", pw)
		// 100 failures (the default ceiling) from 50 addresses, 2 each.
		for i := range 100 {
			addr := fmt.Sprintf("203.0.113.%d", i/2)
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", addr); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("failure %d from %s: %v", i, addr, err)
			}
		}
		// Below the per-address limit of 5, yet held: 2 failures, the
		// wait doubled once past 1.
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", "nope nope nope", "203.0.113.0"); !throttledFor(err, 2*time.Minute) {
			t.Fatalf("an address with failures past the ceiling: %v, want a 2 min wait", err)
		}
		// A new address has one guess, then waits.
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", "nope nope nope", "192.0.2.1"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Fatalf("a new address past the ceiling: %v", err)
		}
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", pw, "192.0.2.1"); !throttledFor(err, time.Minute) {
			t.Fatalf("a new address's second attempt past the ceiling: %v, want a 1 min wait", err)
		}
		// The owner, at an address with no failures, signs in.
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); err != nil {
			t.Fatalf("the owner past the ceiling: %v", err)
		}
		// The ceiling is per account: another account's addresses are not held.
		replicas[0].SignUp(ctx, "bob@example.com", pw)
		if _, err := replicas[0].Authenticate(ctx, "bob@example.com", pw, "203.0.113.0"); err != nil {
			t.Fatalf("another account from a held address: %v", err)
		}
		// The window slides: 15 minutes on, the addresses have 5 again.
		clk.Advance(15*time.Minute + time.Second)
		for i := range 4 {
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "203.0.113.0"); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("failure %d after the window: %v", i, err)
			}
		}
	})
}

// TestThrottleResetForgivesOwnAddress: the owner held at their own address
// after wrong passwords resets the password there and signs in at once
// with the new one; the reset does not free other addresses.
func TestThrottleResetForgivesOwnAddress(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		_, svc, mb, _ := signedUp(t, s)
		for range 7 {
			svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7")
			svc.Authenticate(ctx, "ada@example.com", "nope nope nope", "203.0.113.9")
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.7"); !errors.Is(err, identity.ErrThrottled) {
			t.Fatalf("own address after 7 failures: %v", err)
		}
		if err := svc.RequestPasswordReset(ctx, "ada@example.com", "198.51.100.7"); err != nil {
			t.Fatal(err)
		}
		_, tok := mb.lastLink(t, identity.TopicPasswordReset)
		const next = "a brand new passphrase"
		if _, err := svc.ResetPassword(ctx, tok, next, "198.51.100.7"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", next, "198.51.100.7"); err != nil {
			t.Fatalf("the new password at the reset's address: %v", err)
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", next, "203.0.113.9"); !errors.Is(err, identity.ErrThrottled) {
			t.Fatalf("another held address after the reset: %v, want it still held", err)
		}
	})
}
