package identity_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/password"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// cheapArgon2 is an argon2id hash with the smallest parameters: an old
// hash as far as the current parameters are concerned.
func cheapArgon2(pw string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(pw), salt, 1, 8, 1, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$m=8,t=1,p=1$%s$%s", enc.EncodeToString(salt), enc.EncodeToString(sum))
}

// With every hashing slot busy, sign-in, sign-up and a password change
// answer ErrBusy after the pool's wait, check nothing, count no failure
// and change nothing; once a slot frees, the same sign-in works.
func TestBusySlots(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	pool := password.NewPool(1, 20*time.Millisecond)
	svc, err := identity.New(identity.Config{Store: s, Clock: start().Now, Hasher: pool,
		Throttle: identity.ThrottlePolicy{AccountLimit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	acct := store.Account{ID: store.NewID("acct"), Email: "ada@example.com", PasswordHash: cheapArgon2(pw),
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	release, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := svc.Authenticate(ctx, "ada@example.com", "wrong password!", "192.0.2.1"); !errors.Is(err, identity.ErrBusy) {
			t.Fatalf("sign-in with busy slots: %v", err)
		}
	}
	if _, err := svc.SignUp(ctx, "bob@example.com", pw); !errors.Is(err, identity.ErrBusy) {
		t.Fatalf("sign-up with busy slots: %v", err)
	}
	if _, err := s.GetAccountByEmail(ctx, "bob@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("busy sign-up created an account: %v", err)
	}
	if err := svc.ChangePassword(ctx, acct.ID, pw, "another long password", "", "192.0.2.1"); !errors.Is(err, identity.ErrBusy) {
		t.Fatalf("password change with busy slots: %v", err)
	}
	release()
	// No failure was counted while busy (the limit is 1), so the right
	// password works at once.
	if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "192.0.2.1"); err != nil {
		t.Fatalf("sign-in after the slot frees: %v", err)
	}
	if !strings.Contains(identity.ErrBusy.Error(), "try again in a moment") {
		t.Fatalf("ErrBusy says %q", identity.ErrBusy)
	}
}

// A hash made with older parameters is replaced at the next successful
// sign-in, on both backends; a failed sign-in leaves it alone.
func TestSignInUpgradesOldHash(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s, start(), nil) // password.Default
		old := cheapArgon2(pw)
		acct := store.Account{ID: store.NewID("acct"), Email: "ada@example.com", PasswordHash: old,
			CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
		if err := s.CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", "wrong password!", "192.0.2.1"); !errors.Is(err, identity.ErrInvalidCredentials) {
			t.Fatal(err)
		}
		if a, _ := s.GetAccount(ctx, acct.ID); a.PasswordHash != old {
			t.Fatal("a failed sign-in changed the hash")
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		a, err := s.GetAccount(ctx, acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.PasswordHash == old || password.NeedsRehash(a.PasswordHash) {
			t.Fatalf("hash not upgraded: %q", a.PasswordHash)
		}
		if _, err := svc.Authenticate(ctx, "ada@example.com", pw, "192.0.2.1"); err != nil {
			t.Fatalf("sign-in with the upgraded hash: %v", err)
		}
	})
}
