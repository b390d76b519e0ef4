// Package keys manages Linkslot's ES256 signing keys.
//
// Keys live in the database (store.Keys), one set per purpose ("token" for
// access and ID tokens, "grant" for booking grants). The private half is
// encrypted at rest with AES-256-GCM under a key derived from the
// configured secret key with HKDF-SHA256 (info "linkslot keys v1/<purpose>"),
// and the key id is bound to the ciphertext as additional data, so a
// ciphertext moved to another row or tampered with fails to open.
//
// The newest key signs. Rotate adds a new key and retires the previous
// current one; the published JWKS holds the current and the previous key
// and every key retired less than RetiredWindow (access-token lifetime +
// 5 minutes) ago, so tokens signed before a rotation — even two rotations
// in quick succession — keep verifying until they expire.
//
// A Manager caches the decrypted current key. SigningKey re-reads the key
// list at most once per second (a cheap indexed query) so a rotation made by
// another process (the CLI) is picked up promptly.
package keys
