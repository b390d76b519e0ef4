// Package clients holds the registration rules for OAuth clients that the
// authorization server, the admin CLI and the admin pages share: what a valid
// registration is (Validate), how a requested redirect URI matches a
// registered one (MatchRedirect, RFC 8252 §7.3 for loopback), and how client
// secrets are generated and stored.
//
// Client secrets are generated here, 256 random bits, never chosen by people.
// Because they are high-entropy, a slow password hash buys nothing against
// brute force; the stored form is "hs256$<salt>$<HMAC-SHA256(salt, secret)>"
// (16-byte random salt, hex), which keeps the token endpoint fast, and the
// comparison is constant-time.
package clients
