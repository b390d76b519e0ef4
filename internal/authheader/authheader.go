package authheader

import (
	"errors"
	"net/http"
	"strings"
)

// Errors returned by Bearer.
var (
	// ErrMissing: no Authorization header (RFC 6750 §3.1: answer 401 with
	// no error code).
	ErrMissing = errors.New("authheader: no Authorization header")
	// ErrMultiple: more than one Authorization header (RFC 6750 §3.1
	// invalid_request, 400).
	ErrMultiple = errors.New("authheader: more than one Authorization header")
	// ErrMalformed: not exactly "Bearer <b64token>" (invalid_token, 401).
	ErrMalformed = errors.New("authheader: Authorization is not a well-formed bearer credential")
)

// Bearer returns the bearer token of h's one Authorization header.
func Bearer(h http.Header) (string, error) {
	vs := h.Values("Authorization")
	switch {
	case len(vs) == 0:
		return "", ErrMissing
	case len(vs) > 1:
		return "", ErrMultiple
	}
	return ParseBearer(vs[0])
}

// ParseBearer parses one Authorization header value.
func ParseBearer(v string) (string, error) {
	const scheme = "Bearer "
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", ErrMalformed
	}
	tok := v[len(scheme):]
	if !isB64Token(tok) {
		return "", ErrMalformed
	}
	return tok, nil
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' {
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
