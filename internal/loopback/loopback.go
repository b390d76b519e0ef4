// Package loopback is Linkslot's one rule for "this host is the person's own
// computer", used wherever loopback is special: redirect URIs that may use
// http and match any port (internal/clients, RFC 8252 §7.3 and §8.3), the
// consent pages' form-action targets (consent-ui), the resource server's
// Origin and Host checks for a loopback resource
// (resourceserver/internal/router), the http URLs that outside fetches
// allow in development (internal/safefetch, internal/cimd), and the
// loopback browser origins the authorization server's CORS allows in
// development (authserver/internal/endpoint).
//
// A host is loopback when it is the name localhost (ASCII, any case, as
// DNS names compare) or an IP literal in 127.0.0.0/8 or ::1, IPv4-mapped
// forms included. Names that merely resolve to a loopback address
// (localhost.example, 127.0.0.1.nip.io) are not: the rule is decided on
// the text, without DNS.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether h — a host name or IP literal, without port; the
// brackets of an IPv6 literal are allowed — is loopback.
func Host(h string) bool {
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// HostPort is Host for a URL's or request's host, with or without port.
func HostPort(hostport string) bool {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return Host(h)
	}
	return Host(hostport)
}
