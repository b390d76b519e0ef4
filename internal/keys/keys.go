package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/store"
)

// ErrNoKey is returned when no signing key exists (call Ensure).
var ErrNoKey = errors.New("keys: no signing key")

// ErrDecrypt is returned when a stored private key cannot be opened: wrong
// secret key, or the ciphertext was altered.
var ErrDecrypt = errors.New("keys: cannot decrypt signing key (wrong LINKSLOT_SECRET_KEY or tampered row)")

// Published is how many of the newest keys the JWKS always publishes: the
// current and the previous.
const Published = 2

// RetiredWindow is how long a retired key stays published beyond those:
// the access-token lifetime (15 minutes) plus a 5-minute margin, so tokens
// signed before two rotations in quick succession keep verifying until
// they expire.
const RetiredWindow = 15*time.Minute + 5*time.Minute

// RSABits is the size of the RS256 keys: 2048 bits, what the large OpenID
// providers publish, safe under NIST SP 800-57 through 2030, and a third of
// the signing cost of 3072 bits (docs/id-tokens-and-redirects.md).
const RSABits = 2048

// Algorithm is the algorithm of a purpose's keys: RS256 for
// store.KeyPurposeTokenRS256, ES256 for every other.
func Algorithm(purpose string) jose.SignatureAlgorithm {
	if purpose == store.KeyPurposeTokenRS256 {
		return jose.RS256
	}
	return jose.ES256
}

// refreshEvery bounds how often SigningKey re-reads the key list.
const refreshEvery = time.Second

// fresh reports whether a list read at read is still good at now, on the
// manager's clock (a clock that went backwards counts as stale).
func fresh(now, read time.Time) bool {
	return !now.Before(read) && now.Sub(read) < refreshEvery
}

// Manager signs with the current key of one purpose and publishes the public
// halves. It is safe for concurrent use.
type Manager struct {
	s       store.Keys
	sealer  *Sealer
	purpose string
	alg     jose.SignatureAlgorithm
	clock   store.Clock

	mu        sync.Mutex
	checked   time.Time
	currentID string
	current   crypto.Signer // *ecdsa.PrivateKey or *rsa.PrivateKey, as alg says
	byID      map[string]crypto.Signer
	// refreshing is set while one caller re-reads the key list.
	refreshing bool
	// published caches the parsed public keys (PublicKey) until publishedAt
	// is refreshEvery old.
	published   map[string]publicKey
	publishedAt time.Time
}

// NewManager returns a Manager for keys of purpose (of Algorithm(purpose)),
// encrypted under a key derived from secret. clock may be nil (system
// clock).
func NewManager(s store.Keys, secret []byte, purpose string, clock store.Clock) *Manager {
	if clock == nil {
		clock = store.SystemClock
	}
	return &Manager{s: s, sealer: NewSealer(secret, purpose), purpose: purpose, alg: Algorithm(purpose), clock: clock, byID: map[string]crypto.Signer{}}
}

// Purpose reports the manager's key purpose.
func (m *Manager) Purpose() string { return m.purpose }

// Alg reports the algorithm of the manager's keys.
func (m *Manager) Alg() jose.SignatureAlgorithm { return m.alg }

// Ensure creates the first key when none exists.
func (m *Manager) Ensure(ctx context.Context) error {
	ks, err := m.s.ListSigningKeys(ctx, m.purpose)
	if err != nil {
		return fmt.Errorf("list signing keys: %w", err)
	}
	if len(ks) > 0 {
		return nil
	}
	_, err = m.create(ctx)
	return err
}

// Rotate creates a new current key and retires the previous one (it stays
// published). It returns the new key id.
func (m *Manager) Rotate(ctx context.Context) (string, error) {
	old, err := m.s.ListSigningKeys(ctx, m.purpose)
	if err != nil {
		return "", fmt.Errorf("list signing keys: %w", err)
	}
	kid, err := m.create(ctx)
	if err != nil {
		return "", err
	}
	now := m.clock()
	for _, k := range old {
		if k.RetiredAt == nil {
			if err := m.s.RetireSigningKey(ctx, k.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return kid, fmt.Errorf("retire key %s: %w", k.ID, err)
			}
		}
	}
	m.mu.Lock()
	m.checked, m.published = time.Time{}, nil
	m.mu.Unlock()
	return kid, nil
}

func (m *Manager) create(ctx context.Context) (string, error) {
	var (
		priv crypto.Signer
		der  []byte
	)
	switch m.alg {
	case jose.RS256:
		k, err := rsa.GenerateKey(rand.Reader, RSABits)
		if err != nil {
			return "", err
		}
		priv, der = k, x509.MarshalPKCS1PrivateKey(k)
	default:
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		if der, err = x509.MarshalECPrivateKey(k); err != nil {
			return "", err
		}
		priv = k
	}
	// Key ids sort by creation: the store orders by created_at, id.
	kid := m.purpose + "-" + m.clock().Format("20060102T150405") + "-" + store.RandomString(5)
	pub, err := json.Marshal(jose.JSONWebKey{Key: priv.Public(), KeyID: kid, Algorithm: string(m.alg), Use: "sig"})
	if err != nil {
		return "", err
	}
	k := store.SigningKey{ID: kid, Purpose: m.purpose, Algorithm: string(m.alg),
		PrivateEncrypted: m.seal(kid, der), PublicJWK: pub, CreatedAt: m.clock()}
	if err := m.s.CreateSigningKey(ctx, k); err != nil {
		return "", fmt.Errorf("store signing key: %w", err)
	}
	return kid, nil
}

// seal encrypts plaintext as nonce || ciphertext, binding the key id.
func (m *Manager) seal(kid string, plain []byte) []byte {
	return m.sealer.Seal(plain, []byte(m.purpose+"/"+kid))
}

func (m *Manager) open(kid string, sealed []byte) ([]byte, error) {
	plain, err := m.sealer.Open(sealed, []byte(m.purpose+"/"+kid))
	if err != nil {
		return nil, ErrDecrypt
	}
	return plain, nil
}

func (m *Manager) decrypt(k store.SigningKey) (crypto.Signer, error) {
	der, err := m.open(k.ID, k.PrivateEncrypted)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, err)
	}
	var priv crypto.Signer
	if m.alg == jose.RS256 {
		priv, err = x509.ParsePKCS1PrivateKey(der) // precomputed: parsed once per key and process
	} else {
		priv, err = x509.ParseECPrivateKey(der)
	}
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, ErrDecrypt)
	}
	return priv, nil
}

// load returns the current private key, re-reading the key list when it
// was last read more than refreshEvery ago. Only the first caller to find
// the list stale reads it; the others keep signing with the cached key
// meanwhile, so a signer never waits on the database once a key is cached.
func (m *Manager) load(ctx context.Context) (string, crypto.Signer, error) {
	m.mu.Lock()
	now := m.clock()
	if m.current != nil && (fresh(now, m.checked) || m.refreshing) {
		kid, priv := m.currentID, m.current
		m.mu.Unlock()
		return kid, priv, nil
	}
	m.refreshing = true
	m.mu.Unlock()

	ks, err := m.s.ListSigningKeys(ctx, m.purpose)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.refreshing = false
	if err != nil {
		if m.current != nil { // serve the cached key through a database hiccup
			return m.currentID, m.current, nil
		}
		return "", nil, fmt.Errorf("list signing keys: %w", err)
	}
	if len(ks) == 0 {
		return "", nil, ErrNoKey
	}
	m.checked = now
	m.published = nil
	if ks[0].ID != m.currentID || m.current == nil {
		priv, ok := m.byID[ks[0].ID]
		if !ok {
			if priv, err = m.decrypt(ks[0]); err != nil {
				return "", nil, err
			}
			m.byID[ks[0].ID] = priv
		}
		m.currentID, m.current = ks[0].ID, priv
	}
	return m.currentID, m.current, nil
}

// SigningKey returns the current private key with its kid and algorithm.
func (m *Manager) SigningKey(ctx context.Context) (jose.SigningKey, error) {
	kid, priv, err := m.load(ctx)
	if err != nil {
		return jose.SigningKey{}, err
	}
	return jose.SigningKey{Algorithm: m.alg, Key: jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(m.alg), Use: "sig"}}, nil
}

// Current returns the current private key and its id (for signers that are
// not go-jose v4, such as fosite's): an *ecdsa.PrivateKey for ES256, an
// *rsa.PrivateKey for RS256.
func (m *Manager) Current(ctx context.Context) (string, crypto.Signer, error) {
	return m.load(ctx)
}

// VerificationKeys returns the published public keys: the current and the
// previous, and every key retired less than RetiredWindow ago.
func (m *Manager) VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	ks, err := m.s.ListSigningKeys(ctx, m.purpose)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	now := m.clock()
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for i, k := range ks {
		if i >= Published && k.RetiredAt != nil && now.Sub(*k.RetiredAt) >= RetiredWindow {
			continue
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(k.PublicJWK); err != nil {
			return nil, fmt.Errorf("key %s: public JWK: %w", k.ID, err)
		}
		set.Keys = append(set.Keys, jwk)
	}
	return set, nil
}

// publicKey is a parsed key of the list, with what decides whether it is
// still published.
type publicKey struct {
	pub       crypto.PublicKey
	newest    bool // among the Published newest
	retiredAt *time.Time
}

// isPublished applies VerificationKeys' rule at now.
func (k publicKey) isPublished(now time.Time) bool {
	return k.newest || k.retiredAt == nil || now.Sub(*k.retiredAt) < RetiredWindow
}

// PublicKey returns the published public key with the given kid. The
// parsed keys are cached for refreshEvery (like the signing key), so
// verifying a token costs no database read and no JWK parsing; whether a
// cached key is still published is decided at each call with the
// manager's clock, as VerificationKeys does. A kid not in the cache re-reads
// the list at once (a key another replica just created). The key is an
// *ecdsa.PublicKey for ES256, an *rsa.PublicKey for RS256.
func (m *Manager) PublicKey(ctx context.Context, kid string) (crypto.PublicKey, error) {
	m.mu.Lock()
	if m.published != nil && fresh(m.clock(), m.publishedAt) {
		k, ok := m.published[kid]
		m.mu.Unlock()
		if ok && k.isPublished(m.clock()) {
			return k.pub, nil
		}
	} else {
		m.mu.Unlock()
	}
	ks, err := m.s.ListSigningKeys(ctx, m.purpose)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	now := m.clock()
	byKid := make(map[string]publicKey, len(ks))
	for i, k := range ks {
		pk := publicKey{newest: i < Published, retiredAt: k.RetiredAt}
		if !pk.isPublished(now) {
			continue // long retired: never published again
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(k.PublicJWK); err != nil {
			return nil, fmt.Errorf("key %s: public JWK: %w", k.ID, err)
		}
		switch pub := jwk.Key.(type) {
		case *ecdsa.PublicKey:
			pk.pub = pub
		case *rsa.PublicKey:
			pk.pub = pub
		default:
			continue
		}
		byKid[jwk.KeyID] = pk
	}
	m.mu.Lock()
	m.published, m.publishedAt = byKid, now
	m.mu.Unlock()
	if k, ok := byKid[kid]; ok && k.isPublished(now) {
		return k.pub, nil
	}
	return nil, fmt.Errorf("keys: unknown kid %q", kid)
}

// PublicJWKS returns the JSON of VerificationKeys.
func (m *Manager) PublicJWKS(ctx context.Context) ([]byte, error) {
	set, err := m.VerificationKeys(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(set)
}
