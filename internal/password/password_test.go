package password_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/password"
)

// old are the parameters of the first release (t=2); cheap are the
// smallest argon2id accepts.
var (
	old   = password.Params{MemoryKiB: 64 * 1024, Iterations: 2, Threads: 1, KeyLen: 32, SaltLen: 16}
	cheap = password.Params{MemoryKiB: 8, Iterations: 1, Threads: 1, KeyLen: 32, SaltLen: 16}
)

func TestHashCheck(t *testing.T) {
	ctx := context.Background()
	h, err := password.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=1$") || strings.Contains(h, "correct horse") {
		t.Fatalf("unexpected hash %q", h)
	}
	if password.NeedsRehash(h) {
		t.Fatal("a new hash needs a rehash")
	}
	c1, _ := password.HashWith("correct horse", cheap)
	c2, _ := password.HashWith("correct horse", cheap)
	if c1 == c2 {
		t.Fatal("not salted")
	}
	tests := []struct {
		name, hash, pw string
		want           bool
	}{
		{"match", h, "correct horse", true},
		{"wrong", h, "correct horsE", false},
		{"bcrypt-looking", "$2a$10$abcdefghijklmnopqrstuu", "correct horse", false},
		{"garbage", "$argon2id$v=19$m=x$$", "correct horse", false},
		{"empty hash", "", "", false},
		{"huge memory", strings.Replace(h, "m=65536", "m=4194304", 1), "correct horse", false},
		{"too long", h, strings.Repeat("x", password.MaxLength+1), false},
	}
	for _, tt := range tests {
		ok, up, err := password.Default.Check(ctx, tt.hash, tt.pw)
		if err != nil || ok != tt.want || up != "" {
			t.Errorf("%s: got %v %q %v", tt.name, ok, up, err)
		}
	}
	if _, err := password.Hash(strings.Repeat("x", password.MaxLength+1)); !errors.Is(err, password.ErrTooLong) {
		t.Fatalf("over-long password: %v", err)
	}
}

// A right password whose hash has other parameters comes back with an
// upgraded hash; a wrong one does not.
func TestCheckUpgrades(t *testing.T) {
	ctx := context.Background()
	h, _ := password.HashWith("correct horse", old)
	if !password.NeedsRehash(h) || password.NeedsRehash(strings.Replace(h, "t=2", "t=3", 1)) {
		t.Fatal("rehash is decided by the parameters")
	}
	for _, p := range []password.Params{cheap} {
		h, err := password.HashWith("correct horse", p)
		if err != nil {
			t.Fatal(err)
		}
		if !password.NeedsRehash(h) {
			t.Fatalf("%+v: no rehash needed", p)
		}
		if ok, up, err := password.Default.Check(ctx, h, "wrong horse"); ok || up != "" || err != nil {
			t.Fatalf("wrong password: %v %q %v", ok, up, err)
		}
		ok, up, err := password.Default.Check(ctx, h, "correct horse")
		if !ok || err != nil || up == "" || password.NeedsRehash(up) {
			t.Fatalf("%+v: %v %q %v", p, ok, up, err)
		}
		if ok, again, err := password.Default.Check(ctx, up, "correct horse"); !ok || again != "" || err != nil {
			t.Fatalf("upgraded hash: %v %q %v", ok, again, err)
		}
	}
}

// With every slot taken, a hash waits the pool's wait and answers ErrBusy;
// once a slot is released it runs.
func TestPoolAdmission(t *testing.T) {
	ctx := context.Background()
	pool := password.NewPool(2, 50*time.Millisecond)
	if pool.Slots() != 2 {
		t.Fatalf("slots = %d", pool.Slots())
	}
	h, _ := password.HashWith("pw-pw-pw-pw", cheap)
	r1, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pool.Check(ctx, h, "pw-pw-pw-pw"); !errors.Is(err, password.ErrBusy) {
		t.Fatalf("check with no slot: %v", err)
	}
	if _, err := pool.Hash(ctx, "pw-pw-pw-pw"); !errors.Is(err, password.ErrBusy) {
		t.Fatalf("hash with no slot: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := password.NewPool(1, time.Hour).Hash(cctx, "x"); err != nil {
		t.Fatalf("a free slot is taken even with a done context: %v", err)
	}
	if _, _, err := password.NewPool(1, time.Hour).Check(cctx, "$argon2id$v=19$m=x$$", "x"); err != nil {
		t.Fatalf("malformed hash: %v", err)
	}
	full := password.NewPool(1, time.Hour)
	rf, _ := full.Acquire(ctx)
	if _, err := full.Hash(cctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting with a done context: %v", err)
	}
	rf()

	// A waiter gets the slot that is released while it waits.
	done := make(chan error, 1)
	slow := password.NewPool(1, time.Hour)
	rs, _ := slow.Acquire(ctx)
	go func() {
		ok, up, err := slow.Check(ctx, h, "pw-pw-pw-pw")
		if err == nil && (!ok || up == "") {
			err = errors.New("no match or no upgrade")
		}
		done <- err
	}()
	rs()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r1()
	r2()
	// With one slot of two busy, the upgrade still happens.
	r1, _ = pool.Acquire(ctx)
	if ok, up, err := pool.Check(ctx, h, "pw-pw-pw-pw"); !ok || err != nil || up != "" {
		// Both slots held during the check: every other slot busy, so
		// the upgrade waits for a calmer sign-in.
		t.Fatalf("saturated pool: %v %q %v", ok, up, err)
	}
	r1()
	if ok, up, err := pool.Check(ctx, h, "pw-pw-pw-pw"); !ok || err != nil || up == "" {
		t.Fatalf("idle pool: %v %q %v", ok, up, err)
	}
}

func TestDefaultSlots(t *testing.T) {
	n := password.DefaultSlots()
	if n < 1 || n > password.MaxSlots || password.Default.Slots() != n {
		t.Fatalf("default slots = %d (pool %d)", n, password.Default.Slots())
	}
}
