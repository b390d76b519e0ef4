// Package safefetch fetches small documents that someone else named by URL —
// a client ID metadata document, a client's JWKS — without letting that URL
// reach into the network Linkslot runs in (docs/reference.md §10), and holds the
// address rules that every outbound request to a user-chosen URL follows
// (webhooks, §11, reuse them through NewTransport).
//
// Two pieces:
//
// Rules decides which IP addresses may be dialled. It is enforced in the
// dialer's Control hook, that is on the address the socket is about to
// connect to, after name resolution: a name that resolves to a public address
// once and to 10.0.0.1 the next time (DNS rebinding) is refused the second
// time, because the check runs on every connection, not on the name. Refused
// are the unspecified, loopback (unless Rules.AllowLoopback, development
// only), private (RFC 1918), shared (CGNAT 100.64.0.0/10), link-local
// (169.254.0.0/16, including the cloud metadata address 169.254.169.254, and
// fe80::/10), multicast, broadcast and reserved (240.0.0.0/4) ranges, the
// IETF, benchmarking and documentation ranges, IPv6 unique-local fc00::/7 and
// site-local fec0::/10, and the IPv6 forms that carry an IPv4 address
// (IPv4-mapped ::ffff:0:0/96 is judged by the IPv4 address it carries; the
// deprecated IPv4-compatible ::/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
// 6to4 2002::/16 and Teredo 2001::/32 are refused outright, since the IPv4
// address behind them cannot be vetted). NewDialer, NewTransport and
// NewClient build a net.Dialer, an http.Transport (no proxy from the
// environment: a proxy would dial on our behalf, past the rules) and an
// http.Client that never follows redirects, all under those rules.
//
// Fetcher[T] is a GET with the draft's fetch rules: the URL is https (in
// development also http, for a host that is localhost or a loopback
// address); no redirect is followed; only a 200 whose Content-Type is JSON
// (application/json or a +json type) and whose body is valid JSON counts;
// the body is at most MaxBytes (5 KiB by default); the whole exchange,
// body included, takes at most Timeout (5 s); TLS is verified against the
// system trust store (which Go reads from SSL_CERT_FILE when set) unless
// RootCAs says otherwise. The body is handed to the caller's Decode, which
// validates and converts it; only a document that Decode accepts is cached,
// for as long as its Cache-Control max-age (or Expires) says, bounded to
// [MinTTL, MaxTTL] (5 min – 24 h by default; no-store, no-cache and absent
// headers mean MinTTL). Failures of any kind are never cached. Concurrent
// fetches of one URL share one request. Every Get reports one outcome to
// Observe (ok, cached, bad_url, address_refused, redirect, status, not_json,
// too_large, timeout, tls, network, invalid), which the servers turn into
// linkslot_fetches_total{kind,outcome}.
//
// Errors are *Error values with a Reason; Error() never contains the body.
// Describe gives the sentence a person is shown.
package safefetch
