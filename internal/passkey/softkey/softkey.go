// Package softkey is a software WebAuthn authenticator for tests: it
// answers the options internal/passkey hands a page the way a browser's
// navigator.credentials.create and .get do, with real P-256 keys, "none"
// attestation and the JSON encoding go-webauthn parses. It keeps
// discoverable credentials (user handle included) per RP ID.
package softkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
)

// Key is one credential the authenticator holds.
type Key struct {
	ID         []byte
	RPID       string
	UserHandle []byte
	priv       *ecdsa.PrivateKey
	// Counter, when Counting, advances at every assertion; otherwise it
	// stays 0 like a synced passkey's.
	Counter  uint32
	Counting bool
}

// Authenticator holds credentials. The zero value is ready; UV false
// makes it answer without user verification.
type Authenticator struct {
	mu   sync.Mutex
	Keys []*Key
	// NoUV answers without the user-verified flag.
	NoUV bool
	// Counting makes new credentials keep a signature counter.
	Counting bool
}

var b64 = base64.RawURLEncoding

type descriptor struct {
	ID string `json:"id"`
}

type creationOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		ExcludeCredentials []descriptor `json:"excludeCredentials"`
	} `json:"publicKey"`
}

type requestOptions struct {
	PublicKey struct {
		Challenge        string       `json:"challenge"`
		RPID             string       `json:"rpId"`
		AllowCredentials []descriptor `json:"allowCredentials"`
	} `json:"publicKey"`
}

// ErrExcluded: the authenticator already holds an excluded credential.
var ErrExcluded = errors.New("softkey: a credential in excludeCredentials is on this authenticator")

// ErrNoCredential: no credential for this RP ID (and allow list).
var ErrNoCredential = errors.New("softkey: no matching credential")

func (a *Authenticator) flags(extra byte) byte {
	f := byte(0x01) | extra // user present
	if !a.NoUV {
		f |= 0x04
	}
	return f
}

func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	return b
}

// Create answers creation options (the JSON internal/passkey puts on the
// page) as navigator.credentials.create would at origin, and keeps the new
// credential.
func (a *Authenticator) Create(options, origin string) ([]byte, *Key, error) {
	var o creationOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		return nil, nil, fmt.Errorf("softkey: options: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ex := range o.PublicKey.ExcludeCredentials {
		for _, k := range a.Keys {
			if b64.EncodeToString(k.ID) == ex.ID {
				return nil, nil, ErrExcluded
			}
		}
	}
	uh, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("softkey: user id: %w", err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	k := &Key{ID: make([]byte, 32), RPID: o.PublicKey.RP.ID, UserHandle: uh, priv: priv, Counting: a.Counting}
	rand.Read(k.ID)
	pub, _ := priv.PublicKey.ECDH()
	raw := pub.Bytes() // 0x04 || X || Y
	cose, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:65]})
	if err != nil {
		return nil, nil, err
	}
	rp := sha256.Sum256([]byte(k.RPID))
	auth := append([]byte{}, rp[:]...)
	auth = append(auth, a.flags(0x40)) // attested credential data
	auth = binary.BigEndian.AppendUint32(auth, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(k.ID)))
	auth = append(auth, k.ID...)
	auth = append(auth, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, nil, err
	}
	resp, err := json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.ID), "rawId": b64.EncodeToString(k.ID), "type": "public-key",
		"authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(clientData("webauthn.create", o.PublicKey.Challenge, origin)),
			"attestationObject": b64.EncodeToString(att),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{"credProps": map[string]any{"rk": true}},
	})
	if err != nil {
		return nil, nil, err
	}
	a.Keys = append(a.Keys, k)
	return resp, k, nil
}

// Get answers request options as navigator.credentials.get would at
// origin, with the first credential for the RP ID that the allow list (if
// any) names.
func (a *Authenticator) Get(options, origin string) ([]byte, *Key, error) {
	var o requestOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		return nil, nil, fmt.Errorf("softkey: options: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.Keys {
		if k.RPID != o.PublicKey.RPID || !allowed(k, o.PublicKey.AllowCredentials) {
			continue
		}
		resp, err := a.sign(k, o.PublicKey.Challenge, origin)
		return resp, k, err
	}
	return nil, nil, ErrNoCredential
}

// Sign answers request options with the key k, whatever they allow.
func (a *Authenticator) Sign(k *Key, options, origin string) ([]byte, error) {
	var o requestOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil {
		return nil, fmt.Errorf("softkey: options: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sign(k, o.PublicKey.Challenge, origin)
}

func allowed(k *Key, allow []descriptor) bool {
	if len(allow) == 0 {
		return true
	}
	for _, d := range allow {
		if d.ID == b64.EncodeToString(k.ID) {
			return true
		}
	}
	return false
}

func (a *Authenticator) sign(k *Key, challenge, origin string) ([]byte, error) {
	if k.Counting {
		k.Counter++
	}
	cd := clientData("webauthn.get", challenge, origin)
	rp := sha256.Sum256([]byte(k.RPID))
	auth := append([]byte{}, rp[:]...)
	auth = append(auth, a.flags(0))
	auth = binary.BigEndian.AppendUint32(auth, k.Counter)
	cdh := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, auth...), cdh[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.ID), "rawId": b64.EncodeToString(k.ID), "type": "public-key",
		"authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(cd),
			"authenticatorData": b64.EncodeToString(auth),
			"signature":         b64.EncodeToString(sig),
			"userHandle":        b64.EncodeToString(k.UserHandle),
		},
		"clientExtensionResults": map[string]any{},
	})
}
