package clientaddr

import (
	"net/netip"
	"strings"
)

// MaxHops bounds how many entries a forwarding header may list; a longer
// one is malformed (no real chain of proxies is that long).
const MaxHops = 32

// maxHeader bounds the joined header value that is parsed at all.
const maxHeader = 4096

// ParseForwarded parses the value of a Forwarded header (RFC 7239 §4;
// several header lines joined with commas) and returns one Hop per
// element, left to right, from each element's for= parameter.
//
//	Forwarded   = 1#forwarded-element
//	forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
//	forwarded-pair    = token "=" value
//	value             = token / quoted-string
//
// A for= node is an IPv4 address, a bracketed IPv6 address (quoted, since
// brackets and colons are not token characters), either with an optional
// port, "unknown", or an obfuscated identifier starting with "_" (RFC 7239
// §6). Parameter names are case-insensitive and occur at most once per
// element; empty list elements are skipped, as RFC 9110 §5.6.1 asks.
func ParseForwarded(v string) ([]Hop, error) {
	if len(v) > maxHeader {
		return nil, parseError("header too long")
	}
	var hops []Hop
	p := &fwdParser{s: v}
	for {
		p.ows()
		if p.done() {
			break
		}
		if p.peek() == ',' { // empty element
			p.i++
			continue
		}
		hop, err := p.element()
		if err != nil {
			return nil, err
		}
		hops = append(hops, hop)
		if len(hops) > MaxHops {
			return nil, parseError("too many hops")
		}
		p.ows()
		if p.done() {
			break
		}
		if p.peek() != ',' {
			return nil, parseError("expected ',' between elements")
		}
		p.i++
	}
	if len(hops) == 0 {
		return nil, parseError("no element")
	}
	return hops, nil
}

type fwdParser struct {
	s string
	i int
}

func (p *fwdParser) done() bool { return p.i >= len(p.s) }
func (p *fwdParser) peek() byte { return p.s[p.i] }

func (p *fwdParser) ows() {
	for !p.done() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// element parses pairs up to the next ',' at the top level.
func (p *fwdParser) element() (Hop, error) {
	seen := map[string]bool{}
	var hop Hop
	for {
		p.ows()
		if !p.done() && p.peek() == ';' { // empty pair
			p.i++
			continue
		}
		if p.done() || p.peek() == ',' {
			return hop, nil
		}
		name := strings.ToLower(p.token())
		if name == "" {
			return Hop{}, parseError("expected a parameter name")
		}
		if p.done() || p.peek() != '=' {
			return Hop{}, parseError("expected '=' after " + name)
		}
		p.i++
		val, err := p.value()
		if err != nil {
			return Hop{}, err
		}
		if seen[name] {
			return Hop{}, parseError("parameter " + name + " repeated in one element")
		}
		seen[name] = true
		if name == "for" {
			if hop.Addr, err = parseNode(val); err != nil {
				return Hop{}, err
			}
		}
		p.ows()
		if p.done() || p.peek() == ',' {
			return hop, nil
		}
		if p.peek() != ';' {
			return Hop{}, parseError("expected ';' between parameters")
		}
		p.i++
	}
}

func (p *fwdParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *fwdParser) value() (string, error) {
	if p.done() {
		return "", parseError("missing value")
	}
	if p.peek() != '"' {
		t := p.token()
		if t == "" {
			return "", parseError("missing value")
		}
		return t, nil
	}
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.peek()
		p.i++
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\':
			if p.done() {
				return "", parseError("unterminated quoted string")
			}
			q := p.peek()
			if !isQuotedPairChar(q) {
				return "", parseError("invalid escape in quoted string")
			}
			b.WriteByte(q)
			p.i++
		case isQdtext(c):
			b.WriteByte(c)
		default:
			return "", parseError("invalid character in quoted string")
		}
	}
	return "", parseError("unterminated quoted string")
}

// parseNode reads a for= node; an unknown or obfuscated node answers the
// zero Addr.
func parseNode(v string) (netip.Addr, error) {
	if strings.EqualFold(v, "unknown") {
		return netip.Addr{}, nil
	}
	if strings.HasPrefix(v, "_") {
		if !obfuscated(v[1:]) {
			return netip.Addr{}, parseError("invalid obfuscated node")
		}
		return netip.Addr{}, nil
	}
	host, port := v, ""
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return netip.Addr{}, parseError("unterminated IPv6 node")
		}
		host, port = v[1:end], v[end+1:]
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return netip.Addr{}, parseError("invalid IPv6 node")
		}
		if err := checkNodePort(port); err != nil {
			return netip.Addr{}, err
		}
		return a.Unmap(), nil
	}
	if i := strings.IndexByte(v, ':'); i >= 0 {
		host, port = v[:i], v[i:]
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is4() {
		return netip.Addr{}, parseError("invalid node (an IPv6 node must be quoted and bracketed)")
	}
	if err := checkNodePort(port); err != nil {
		return netip.Addr{}, err
	}
	return a, nil
}

// checkNodePort accepts "", ":" + 1-5 digits, or ":_" + an obfuscated port.
func checkNodePort(p string) error {
	if p == "" {
		return nil
	}
	if p[0] != ':' || len(p) == 1 {
		return parseError("invalid node port")
	}
	p = p[1:]
	if p[0] == '_' {
		if !obfuscated(p[1:]) {
			return parseError("invalid obfuscated port")
		}
		return nil
	}
	if len(p) > 5 || !allDigits(p) {
		return parseError("invalid node port")
	}
	return nil
}

func obfuscated(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ParseXForwardedFor parses X-Forwarded-For (several lines joined with
// commas): a comma-separated list of addresses, left to right. An entry may
// carry a port (192.0.2.1:8080, [2001:db8::1]:8080) or brackets around an
// IPv6 address; anything else, an empty entry included, is malformed.
func ParseXForwardedFor(v string) ([]Hop, error) {
	if len(v) > maxHeader {
		return nil, parseError("header too long")
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxHops {
		return nil, parseError("too many hops")
	}
	hops := make([]Hop, 0, len(parts))
	for _, f := range parts {
		f = strings.Trim(f, " \t")
		a, err := parseXFFEntry(f)
		if err != nil {
			return nil, err
		}
		hops = append(hops, Hop{Addr: a})
	}
	return hops, nil
}

func parseXFFEntry(f string) (netip.Addr, error) {
	if f == "" {
		return netip.Addr{}, parseError("empty entry")
	}
	if a, err := netip.ParseAddr(f); err == nil && a.Zone() == "" {
		return a.Unmap(), nil
	}
	if ap, err := netip.ParseAddrPort(f); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), nil
	}
	if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
		if a, err := netip.ParseAddr(f[1 : len(f)-1]); err == nil && a.Is6() && a.Zone() == "" {
			return a.Unmap(), nil
		}
	}
	return netip.Addr{}, parseError("entry is not an IP address")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isTchar: RFC 9110 §5.6.2.
func isTchar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isQdtext: RFC 9110 §5.6.4 (obs-text included).
func isQdtext(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E) || c >= 0x80
}

func isQuotedPairChar(c byte) bool {
	return c == '\t' || c == ' ' || (c >= 0x21 && c <= 0x7E) || c >= 0x80
}
