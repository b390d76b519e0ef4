package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestThrottleShared: two services on one database — two replicas —
// count one set of failures when the throttle keeps them in the rate
// windows: the account limit is reached after 5 failures in all, not 5 on
// each; the wait doubles; the window slides; a correct password clears the
// account's failures on every replica.
func TestThrottleShared(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		clk := start()
		replicas := make([]*identity.Service, 2)
		for i := range replicas {
			svc, err := identity.New(identity.Config{Store: s, Clock: clk.Now, Hasher: cheapHasher{}, RateWindows: s})
			if err != nil {
				t.Fatal(err)
			}
			replicas[i] = svc
		}
		if _, err := replicas[0].SignUp(ctx, "ada@example.com", pw); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7"); !errors.Is(err, identity.ErrInvalidCredentials) {
				t.Fatalf("failure %d: %v", i, err)
			}
		}
		for i, svc := range replicas {
			if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "198.51.100.8"); !throttledFor(err, time.Minute) {
				t.Fatalf("replica %d after 5 failures in all: %v, want a 1 min wait", i, err)
			}
		}
		clk.Advance(time.Minute)
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.7"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Fatalf("after the wait: %v", err)
		}
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", pw, "198.51.100.8"); !throttledFor(err, 2*time.Minute) {
			t.Fatalf("sixth failure: %v, want the wait doubled to 2 min", err)
		}
		clk.Advance(2 * time.Minute)
		if _, err := replicas[0].Authenticate(ctx, "ada@example.com", pw, "198.51.100.8"); err != nil {
			t.Fatalf("correct password after the wait: %v", err)
		}
		// The success cleared the account's failures for both replicas.
		for i := range 4 {
			replicas[i%2].Authenticate(ctx, "ada@example.com", "nope nope nope", "198.51.100.9")
		}
		if _, err := replicas[1].Authenticate(ctx, "ada@example.com", pw, "198.51.100.10"); err != nil {
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
