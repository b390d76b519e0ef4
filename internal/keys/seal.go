package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// ErrOpen is returned when a sealed value cannot be opened: sealed under
// another secret key, bound to other data, or altered.
var ErrOpen = errors.New("keys: cannot open sealed value (wrong LINKSLOT_SECRET_KEY or tampered row)")

// Sealer encrypts small secrets kept in the database: AES-256-GCM under a
// key derived from the secret key with HKDF-SHA256 (info "linkslot keys
// v1/<purpose>"), each sealed value bound to additional data naming where
// it belongs, so a value moved to another row fails to open. Signing keys
// are sealed with one (purpose "token", "grant"); so are the successors of
// rotated refresh tokens (docs/refresh-grace.md). Safe for concurrent use.
type Sealer struct{ aead cipher.AEAD }

// PurposeRefreshSuccessor is the Sealer purpose of the successors of
// rotated refresh tokens.
const PurposeRefreshSuccessor = "refresh-successor"

// NewSealer returns the Sealer of purpose under secret.
func NewSealer(secret []byte, purpose string) *Sealer {
	k, err := hkdf.Key(sha256.New, secret, []byte("linkslot-keys-salt"), "linkslot keys v1/"+purpose, 32)
	if err != nil {
		panic("keys: hkdf: " + err.Error())
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		panic("keys: aes: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("keys: gcm: " + err.Error())
	}
	return &Sealer{aead: aead}
}

// Seal encrypts plain as nonce || ciphertext, bound to ad.
func (s *Sealer) Seal(plain, ad []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("keys: crypto/rand failed: " + err.Error())
	}
	return s.aead.Seal(nonce, nonce, plain, ad)
}

// Open decrypts what Seal sealed with the same ad; anything else answers
// ErrOpen.
func (s *Sealer) Open(sealed, ad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, ErrOpen
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
