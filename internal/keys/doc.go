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
// current one; retired keys stay in the published JWKS (current + previous)
// so tokens signed before a rotation keep verifying until they expire.
//
// A Manager caches the decrypted current key. SigningKey re-reads the key
// list at most once per second (a cheap indexed query) so a rotation made by
// another process (the CLI) is picked up promptly.
package keys
