// Package authheader parses the Authorization request header for bearer
// tokens (RFC 6750 §2.1), strictly and the same way on both servers.
//
// A request must carry at most one Authorization header. Its value must be
// the scheme "Bearer" (case-insensitive, RFC 7235 §2.1), exactly one space,
// and a b64token; anything else — a second header, a second scheme, extra
// words, quotes, control characters, another scheme such as Basic — is
// refused rather than guessed at. Reading only the first of two headers is
// how a proxy and a server come to disagree about who is calling.
package authheader
