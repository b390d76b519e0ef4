// Package password hashes people's passwords with argon2id
// (golang.org/x/crypto/argon2) in the PHC string format
// "$argon2id$v=19$m=<KiB>,t=<iterations>,p=<threads>$<salt>$<hash>" (base64
// without padding), and verifies them in constant time. Parameters are read
// back from each hash, so they can be raised later without breaking old
// hashes.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Parameters of new hashes (RFC 9106 second recommended option, scaled down
// in memory to keep sign-in fast on small machines).
const (
	memoryKiB = 64 * 1024
	time_     = 2
	threads   = 1
	keyLen    = 32
	saltLen   = 16
)

// MaxLength bounds accepted passwords (bytes).
const MaxLength = 1024

// ErrTooLong is returned for a password longer than MaxLength.
var ErrTooLong = errors.New("password: too long")

// Hash returns the argon2id hash of pw.
func Hash(pw string) (string, error) {
	if len(pw) > MaxLength {
		return "", ErrTooLong
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(pw), salt, time_, memoryKiB, threads, keyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, memoryKiB, time_, threads,
		enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// Verify reports whether pw matches hash, in constant time. A malformed hash
// never matches.
func Verify(hash, pw string) bool {
	if len(pw) > MaxLength {
		return false
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<22 || t > 64 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
