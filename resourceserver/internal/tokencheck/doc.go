// Package tokencheck verifies the bearer tokens the resource server accepts.
//
// An access token is an RFC 9068 JWT (header typ "at+jwt", ES256) issued by
// the configured authorization server. Verification happens in two steps:
//
//  1. Cryptographic and claim checks with github.com/coreos/go-oidc/v3: the
//     signature against the issuer's JWKS (a RemoteKeySet, cached and
//     refreshed when a token names a kid the cache does not hold), iss equal
//     to the issuer, aud containing this resource's canonical URI, and exp
//     with a small clock skew. Only ES256 is accepted, so "alg": "none" and
//     HMAC confusion are refused by construction. The JOSE header's typ is
//     checked here too, so an ID token can never be replayed as an access
//     token.
//  2. Liveness checks against the store: the token's link is still active,
//     belongs to the token's subject and client, and the client is not
//     disabled. These lookups are cached per link for at most LinkTTL (4 s by
//     default), so a disconnected link stops working within 5 seconds while
//     a busy agent costs no database round trip per call.
//  3. The token's own session: the authorization server stores every access
//     token session (kind access_token, keyed by store.HashSecret of the
//     JWT's signature segment, exactly as fosite's JWT strategy names it)
//     and switches it inactive when the token is revoked — RFC 7009
//     revocation, a reused authorization code, a reused refresh token
//     revoking its family, a revoked link. A missing or inactive session is
//     refused. The answer is cached with the verified token for LinkTTL,
//     so a revoked token stops working within 5 seconds at the cost of at
//     most one query per token per LinkTTL.
//
// A token that verified is remembered (by its SHA-256, never the token
// itself in a log) until it expires, so an agent's repeated calls cost one
// ECDSA verification per token rather than per call; expiry is compared
// with the clock on every call and the link check always runs.
//
// Unknown kids make go-oidc refetch the JWKS; to keep a stream of forged
// tokens from turning into a stream of JWKS fetches, tokens whose kid has
// never verified may trigger a refetch only while a token bucket allows
// (burst 3, then one per RefetchInterval). A kid in the JWKS whose
// signature fails still makes go-oidc refetch; those are bounded by the
// per-address rate limit in front and by go-oidc's single in-flight fetch.
//
// The router puts the Identity of a verified token into the request's
// context with WithIdentity; the tools read it with IdentityFrom.
//
// Errors wrap ErrInvalidToken (answer 401 with error="invalid_token") or
// ErrUnavailable (the store could not be asked; answer 503). Messages never
// contain the token.
package tokencheck
