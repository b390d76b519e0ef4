package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"os"
	"time"
)

var idEncoding = base32.NewEncoding("abcdefghijkmnpqrstuvwxyz23456789").WithPadding(base32.NoPadding)

// NewID returns prefix + "_" + 26 random characters (130 bits).
func NewID(prefix string) string {
	return prefix + "_" + RandomString(16)
}

// LeaseHolder names this process as a lease holder (janitor_leases, the
// outbox's leases): HOST/PID/RANDOM, so that two processes of one host,
// or one restarted, never share a name, and an operator (or the cluster
// tests) can tell which process holds a lease.
func LeaseHolder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), RandomString(4))
}

// RandomString returns n random bytes encoded in an unambiguous lowercase
// alphabet (no 0/o, 1/l). Panics only if the system's randomness fails.
func RandomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	return idEncoding.EncodeToString(b)
}

// HashSecret returns the hex SHA-256 of a high-entropy secret (token
// signatures, session ids). Low-entropy secrets (passwords, client secrets)
// use a slow hash in their own packages instead.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// UTC normalizes an instant the way every backend stores it: UTC, microsecond
// precision.
func UTC(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Clock returns the current time; components take one so tests can pin it.
type Clock func() time.Time

// SystemClock is the real clock, already normalized with UTC.
func SystemClock() time.Time { return UTC(time.Now()) }
