// Package keys manages Linkslot's signing keys.
//
// Keys live in the database (store.Keys), one set per purpose: "token"
// (ES256) for access tokens and ID tokens, "token-rs256" (RS256, RSA
// RSABits) for the ID tokens of clients that choose RS256, "grant" (ES256)
// for booking grants. A purpose's algorithm is fixed (Algorithm). The
// private half is encrypted at rest with AES-256-GCM under a key derived
// from the configured secret key with HKDF-SHA256 (info "linkslot keys
// v1/<purpose>"), and the key id is bound to the ciphertext as additional
// data, so a ciphertext moved to another row or tampered with fails to
// open.
//
// The newest key signs. Rotate adds a new key and retires the previous
// current one; the published JWKS holds the current and the previous key
// and every key retired less than RetiredWindow (access-token lifetime +
// 5 minutes) ago, so tokens signed before a rotation — even two rotations
// in quick succession — keep verifying until they expire.
//
// Rotating the token keys rotates both algorithms together (Purposes), and
// a Set publishes several managers as one JWKS, so the authorization
// server's JWKS holds the current and previous key of each algorithm. A
// database made before RS256 keys existed gets its first RS256 key at the
// next start (Set.Ensure), as every purpose's first key is made.
//
// A Manager caches the decrypted current key. SigningKey re-reads the key
// list at most once per second (a cheap indexed query) so a rotation made by
// another process (the CLI) is picked up promptly.
package keys
