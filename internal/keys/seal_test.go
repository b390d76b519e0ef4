package keys_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkslot/linkslot/internal/keys"
)

// TestSealer: a sealed value opens only under the same secret, purpose and
// additional data, and two seals of one value differ (a fresh nonce each).
func TestSealer(t *testing.T) {
	secret := []byte("test-secret-key-test-secret-key-0123")
	s := keys.NewSealer(secret, "refresh-successor")
	plain, ad := []byte("ory_rt_successor.signature"), []byte("row-1")
	sealed := s.Seal(plain, ad)
	if bytes.Contains(sealed, plain) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if again := s.Seal(plain, ad); bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are equal")
	}
	got, err := s.Open(sealed, ad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for _, tc := range []struct {
		name   string
		s      *keys.Sealer
		sealed []byte
		ad     []byte
	}{
		{"other additional data", s, sealed, []byte("row-2")},
		{"other purpose", keys.NewSealer(secret, "token"), sealed, ad},
		{"other secret", keys.NewSealer([]byte("another-secret-key-another-secret-key"), "refresh-successor"), sealed, ad},
		{"altered", s, tampered, ad},
		{"truncated", s, sealed[:5], ad},
		{"empty", s, nil, ad},
	} {
		if got, err := tc.s.Open(tc.sealed, tc.ad); !errors.Is(err, keys.ErrOpen) || got != nil {
			t.Errorf("%s: Open = %q, %v; want keys.ErrOpen", tc.name, got, err)
		}
	}
}
