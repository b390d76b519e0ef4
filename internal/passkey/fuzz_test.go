package passkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linkslot/linkslot/internal/identity"
	"github.com/linkslot/linkslot/internal/passkey"
	"github.com/linkslot/linkslot/internal/passkey/softkey"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// FuzzFinish feeds arbitrary browser answers to a started sign-in and a
// started registration: none signs anyone in or stores a passkey, and
// every refusal is one of the Service's errors (never a panic).
func FuzzFinish(f *testing.F) {
	fx := newFixture(f, sqltest.SQLite(f), identity.ThrottlePolicy{AddressLimit: 1 << 30})
	ctx := context.Background()
	ada := fx.account("ada@example.com")
	auth := &softkey.Authenticator{}
	fx.register(auth, ada, "phone")
	c, _ := fx.svc.BeginLogin(ctx)
	good, _, _ := auth.Get(c.Options, issuer)
	rc, _ := fx.svc.BeginRegistration(ctx, ada)
	goodCreate, _, _ := (&softkey.Authenticator{}).Create(rc.Options, issuer)
	f.Add(good)
	f.Add(goodCreate)
	f.Add([]byte(`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}`))
	f.Add([]byte(`{"type":"public-key","response":{"attestationObject":"oA","clientDataJSON":"e30"}}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, answer []byte) {
		c, err := fx.svc.BeginLogin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The authenticator answered a different challenge: whatever the
		// bytes, this cannot verify.
		if a, err := fx.svc.FinishLogin(ctx, c.Handle, answer, "192.0.2.1"); err == nil {
			t.Fatalf("signed in %s with %q", a.ID, answer)
		} else if !knownError(err) {
			t.Fatalf("unexpected error %v", err)
		}
		rc, err := fx.svc.BeginRegistration(ctx, ada)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := fx.svc.FinishRegistration(ctx, ada, rc.Handle, "x", answer); err == nil {
			t.Fatalf("stored %s from %q", p.ID, answer)
		} else if !knownError(err) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

func knownError(err error) bool {
	for _, e := range []error{passkey.ErrMalformed, passkey.ErrNotVerified, passkey.ErrUnknownPasskey, passkey.ErrCeremony, passkey.ErrPossibleClone} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
