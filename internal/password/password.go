// Package password hashes people's passwords with argon2id
// (golang.org/x/crypto/argon2) in the PHC string format
// "$argon2id$v=19$m=<KiB>,t=<iterations>,p=<threads>$<salt>$<hash>" (base64
// without padding), verifies them in constant time, and bounds how many
// hashes run at once.
//
// # Parameters
//
// New hashes use m=64 MiB, t=3, p=1 (Current). RFC 9106 §4 asks to fix the
// lanes first, then the memory, then the passes that fit the time budget:
//
//   - p=1: a server's parallelism comes from running one sign-in per core
//     (the slots below), not from lanes inside one hash. Lanes do not make a
//     guess more expensive for an attacker, only faster for us on idle cores.
//   - m=64 MiB and t=3: the memory and passes of RFC 9106's second
//     recommended option ("if much less memory is available": t=3, 64 MiB),
//     and above the OWASP Password Storage Cheat Sheet's floor for argon2id
//     (19 MiB with t=2, or 46 MiB with t=1, p=1). On the 2-core reference
//     machine one hash takes 0.1–0.25 s depending on load.
//
// Parameters are read back from each stored hash, so hashes made with older
// parameters keep verifying; NeedsRehash reports them and Pool.Check returns
// a fresh hash to store at the next successful sign-in (the hashes of the
// first release, t=2, are upgraded this way).
//
// # Admission
//
// An argon2id hash holds its whole memory (64 MiB) while it runs and keeps
// a core busy for a tenth of a second or more. Without a bound, 200
// concurrent sign-ins need 12.8 GiB and finish after the request deadline.
// Every hash therefore runs in one of a fixed number of slots (a Pool):
// DefaultSlots is one per core (GOMAXPROCS), at most MaxSlots, so hashing
// never holds more than MaxSlots × 64 MiB. A caller that cannot get a slot
// within the pool's wait (AdmissionWait, 2 s) gets ErrBusy; the sign-in
// page turns it into 503 with Retry-After. Waiters are served in arrival
// order. Default is the process's pool: memory is a property of the
// process, so everything that hashes in it shares the same slots.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id parameters.
type Params struct {
	MemoryKiB  uint32
	Iterations uint32
	Threads    uint8
	KeyLen     uint32
	SaltLen    uint32
}

// Current are the parameters of new hashes (see the package doc).
var Current = Params{MemoryKiB: 64 * 1024, Iterations: 3, Threads: 1, KeyLen: 32, SaltLen: 16}

// MaxLength bounds accepted passwords (bytes).
const MaxLength = 1024

// AdmissionWait is how long a hash waits for a slot before ErrBusy.
const AdmissionWait = 2 * time.Second

// MaxSlots bounds DefaultSlots whatever the core count, so that hashing
// memory stays within MaxSlots × Current.MemoryKiB (256 MiB).
const MaxSlots = 4

// maxMemoryKiB is the largest m a stored hash may ask for (256 MiB): a
// hash is data, and it must not be able to make one verification take the
// whole budget.
const maxMemoryKiB = 256 * 1024

var (
	// ErrTooLong is returned for a password longer than MaxLength.
	ErrTooLong = errors.New("password: too long")
	// ErrBusy: no hashing slot was free within the pool's wait. Retry
	// in a moment.
	ErrBusy = errors.New("password: all hashing slots are busy")
)

// DefaultSlots is one slot per core (GOMAXPROCS), between 1 and MaxSlots.
func DefaultSlots() int {
	return min(max(runtime.GOMAXPROCS(0), 1), MaxSlots)
}

// Pool runs hashes in a bounded number of slots. It is safe for
// concurrent use.
type Pool struct {
	slots chan struct{}
	wait  time.Duration
}

// NewPool returns a Pool of n slots (at least 1) whose callers wait at most
// wait for one.
func NewPool(n int, wait time.Duration) *Pool {
	return &Pool{slots: make(chan struct{}, max(n, 1)), wait: wait}
}

// Default is the process's pool: DefaultSlots slots, AdmissionWait.
var Default = NewPool(DefaultSlots(), AdmissionWait)

// Slots returns the number of slots.
func (p *Pool) Slots() int { return cap(p.slots) }

// Acquire takes a slot, waiting at most the pool's wait (ErrBusy) or until
// ctx ends (its error). The caller must call release exactly once.
func (p *Pool) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case p.slots <- struct{}{}:
		return p.release, nil
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		return p.release, nil
	case <-t.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Pool) release() { <-p.slots }

// Hash returns the argon2id hash of pw with Current parameters, computed
// in a slot.
func (p *Pool) Hash(ctx context.Context, pw string) (string, error) {
	if len(pw) > MaxLength {
		return "", ErrTooLong
	}
	release, err := p.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return newHash(pw, Current)
}

// Check verifies pw against hash in a slot. When it matches and hash was
// made with parameters other than Current, upgraded is a new hash of pw
// with Current parameters, computed in the same slot, for the caller to
// store — unless every other slot is busy at that moment: a burst is no
// time to double a sign-in's cost, and the next sign-in upgrades instead.
// Otherwise upgraded is empty. err is ErrBusy, a context error or nil; a
// malformed hash never matches (and takes no slot).
func (p *Pool) Check(ctx context.Context, hash, pw string) (ok bool, upgraded string, err error) {
	ph, err := parse(hash)
	if err != nil || len(pw) > MaxLength {
		return false, "", nil
	}
	release, err := p.Acquire(ctx)
	if err != nil {
		return false, "", err
	}
	defer release()
	got := argon2.IDKey([]byte(pw), ph.salt, ph.Iterations, ph.MemoryKiB, ph.Threads, uint32(len(ph.sum)))
	if subtle.ConstantTimeCompare(got, ph.sum) != 1 {
		return false, "", nil
	}
	if ph.Params == Current || len(p.slots) == cap(p.slots) && cap(p.slots) > 1 {
		return true, "", nil
	}
	if upgraded, err = newHash(pw, Current); err != nil {
		return true, "", nil // the sign-in stands; the next one upgrades
	}
	return true, upgraded, nil
}

// Hash returns the argon2id hash of pw, computed in a slot of Default.
func Hash(pw string) (string, error) {
	return Default.Hash(context.Background(), pw)
}

// Verify reports whether pw matches hash, checked in a slot of Default.
// It is false too when no slot frees within AdmissionWait; request paths
// use Pool.Check, which tells the two apart.
func Verify(hash, pw string) bool {
	ok, _, err := Default.Check(context.Background(), hash, pw)
	return ok && err == nil
}

// NeedsRehash reports whether hash was made with parameters other than
// Current (a malformed hash needs one too).
func NeedsRehash(hash string) bool {
	ph, err := parse(hash)
	return err != nil || ph.Params != Current
}

func newHash(pw string, p Params) (string, error) {
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(pw), salt, p.Iterations, p.MemoryKiB, p.Threads, p.KeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Iterations, p.Threads,
		enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

type parsed struct {
	Params
	salt, sum []byte
}

var errMalformed = errors.New("password: malformed hash")

func parse(hash string) (parsed, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return parsed{}, errMalformed
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return parsed{}, errMalformed
	}
	var ph parsed
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &ph.MemoryKiB, &ph.Iterations, &ph.Threads); err != nil ||
		ph.MemoryKiB < 8 || ph.MemoryKiB > maxMemoryKiB || ph.Iterations == 0 || ph.Iterations > 16 ||
		ph.Threads == 0 || ph.Threads > 16 {
		return parsed{}, errMalformed
	}
	enc := base64.RawStdEncoding
	var err error
	if ph.salt, err = enc.DecodeString(parts[4]); err != nil || len(ph.salt) < 8 || len(ph.salt) > 64 {
		return parsed{}, errMalformed
	}
	if ph.sum, err = enc.DecodeString(parts[5]); err != nil || len(ph.sum) < 16 || len(ph.sum) > 128 {
		return parsed{}, errMalformed
	}
	ph.SaltLen, ph.KeyLen = uint32(len(ph.salt)), uint32(len(ph.sum))
	return ph, nil
}
