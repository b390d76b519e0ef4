package safefetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Rules decides which addresses an outbound connection may reach. The zero
// value is the production rule: public unicast addresses only.
type Rules struct {
	// AllowLoopback admits loopback addresses (127.0.0.0/8, ::1). Set it in
	// development only.
	AllowLoopback bool
}

// rangeRule names one refused range.
type rangeRule struct {
	prefix netip.Prefix
	what   string
}

func mustPrefix(s, what string) rangeRule { return rangeRule{netip.MustParsePrefix(s), what} }

// refused lists the special-use ranges beyond those netip classifies itself.
// Order matters only for the name reported: the most specific first.
var refused = []rangeRule{
	mustPrefix("169.254.169.254/32", "the cloud metadata address"),
	mustPrefix("0.0.0.0/8", "the unspecified range"),
	mustPrefix("100.64.0.0/10", "the shared (CGNAT) range"),
	mustPrefix("192.0.0.0/24", "the IETF protocol range"),
	mustPrefix("192.0.2.0/24", "a documentation range"),
	mustPrefix("198.51.100.0/24", "a documentation range"),
	mustPrefix("203.0.113.0/24", "a documentation range"),
	mustPrefix("198.18.0.0/15", "the benchmarking range"),
	mustPrefix("240.0.0.0/4", "the reserved range"),
	mustPrefix("2001:db8::/32", "a documentation range"),
	mustPrefix("fec0::/10", "the site-local range"),
	mustPrefix("64:ff9b::/96", "a NAT64 range"),
	mustPrefix("64:ff9b:1::/48", "a NAT64 range"),
	mustPrefix("2002::/16", "the 6to4 range"),
	mustPrefix("2001::/32", "the Teredo range"),
	mustPrefix("::/96", "the IPv4-compatible range"),
}

// Check reports whether ip may be dialled: nil, or an *Error with reason
// ReasonAddress naming the range.
func (r Rules) Check(ip netip.Addr) error {
	what := r.classify(ip)
	if what == "" {
		return nil
	}
	return &Error{Reason: ReasonAddress, Detail: fmt.Sprintf("address %s is in %s", ip, what)}
}

func (r Rules) classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return "no valid address"
	}
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	switch {
	case ip.IsUnspecified():
		return "the unspecified range"
	case ip.IsLoopback():
		if r.AllowLoopback {
			return ""
		}
		return "the loopback range"
	case ip == netip.MustParseAddr("169.254.169.254"):
		return "the cloud metadata address"
	case ip.IsLinkLocalUnicast():
		return "a link-local range"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast range"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	case ip.IsPrivate():
		if ip.Is6() {
			return "the unique-local range"
		}
		return "a private range"
	}
	for _, rr := range refused {
		if rr.prefix.Contains(ip) {
			return rr.what
		}
	}
	return ""
}

// Control is a net.Dialer Control hook that refuses, before the socket
// connects, an address the rules do not allow.
func (r Rules) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Reason: ReasonAddress, Detail: fmt.Sprintf("cannot judge the address %q", address)}
	}
	return r.Check(ap.Addr())
}

// Resolver looks host names up; *net.Resolver satisfies it. Tests pass one
// that answers with the address under test.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialOptions tune NewDialer and NewTransport; the zero value works.
type DialOptions struct {
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds one TCP connect; zero means 5 s.
	DialTimeout time.Duration
	// RootCAs are the CAs trusted for TLS; nil means the system trust
	// store (SSL_CERT_FILE when set).
	RootCAs *x509.CertPool
}

// Dialer dials under Rules: it resolves the host itself and connects to each
// address in turn through a net.Dialer whose Control hook applies the rules.
type Dialer struct {
	rules    Rules
	resolver Resolver
	dialer   net.Dialer
}

// NewDialer builds a Dialer for rules.
func NewDialer(rules Rules, opts DialOptions) *Dialer {
	res := opts.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	timeout := opts.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Dialer{rules: rules, resolver: res, dialer: net.Dialer{Timeout: timeout, Control: rules.Control}}
}

// DialContext connects to address (host:port) under the rules. The first
// refusal is returned when every address is refused.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("safefetch: bad port %q", portStr)
	}
	var ips []netip.Addr
	if ip, perr := netip.ParseAddr(host); perr == nil {
		ips = []netip.Addr{ip}
	} else {
		lookup := "ip"
		switch network {
		case "tcp4":
			lookup = "ip4"
		case "tcp6":
			lookup = "ip6"
		}
		ips, err = d.resolver.LookupNetIP(ctx, lookup, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("safefetch: %s has no address", host)
		}
	}
	var first error
	for _, ip := range ips {
		conn, err := d.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// NewTransport builds an http.Transport that dials only under rules, uses no
// proxy from the environment, and verifies TLS against opts.RootCAs (nil:
// the system trust store).
func NewTransport(rules Rules, opts DialOptions) *http.Transport {
	d := NewDialer(rules, opts)
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// NewClient builds an http.Client on NewTransport that never follows a
// redirect: a 3xx answer is returned to the caller as it came.
func NewClient(rules Rules, opts DialOptions) *http.Client {
	return &http.Client{
		Transport:     NewTransport(rules, opts),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// IsAddressRefused reports whether err (from a dial or a request) is a
// refusal by the address rules.
func IsAddressRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == ReasonAddress
}

// CheckTarget applies the address rules to what a URL names literally,
// before any connection: a port outside 1–65535, and a host that is an IP
// address in a refused range, answer an *Error (ReasonURL for the port,
// ReasonAddress for the range). Host names are checked when dialled.
func CheckTarget(u *url.URL, rules Rules) error {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return &Error{Reason: ReasonURL, Detail: fmt.Sprintf("port %s, outside 1–65535", p)}
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return &Error{Reason: ReasonURL, Detail: "an empty port"}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		return rules.Check(ip)
	}
	return nil
}
