// Package clientaddr decides which address a request comes from: the TCP
// peer, or — when the peer is a trusted reverse proxy
// (LINKSLOT_TRUSTED_PROXIES) — the client that proxy names in Forwarded
// (RFC 7239) or X-Forwarded-For. Every per-address rule of both servers
// (rate limits, sign-in throttling, logs, audit entries) reads the address
// from here, so all of them agree.
//
// The rule (docs/reference.md §13):
//
//   - A peer outside the trusted ranges is the client. Whatever it sends in
//     Forwarded or X-Forwarded-For is ignored, so nobody chooses their own
//     address.
//   - From a trusted peer, the hops named in the header are read from the
//     right (the hop nearest to us, appended by the proxy we trust) to the
//     left, and the first one that is not itself a trusted proxy is the
//     client. When every hop is trusted, the left-most is the client.
//   - Forwarded is read from its for= parameters; an element without for=,
//     "for=unknown" or an obfuscated identifier ("for=_hidden") ends the
//     walk at the proxy that reported it: that proxy is the address.
//   - When a request carries both headers they must name the same client.
//     Common proxies (nginx, Caddy, cloud load balancers) append to
//     X-Forwarded-For and pass a client's own Forwarded header on
//     untouched; a client could otherwise choose its address by sending
//     the header its proxy does not write.
//   - A malformed header from a trusted peer, or two headers that disagree,
//     fall back to the peer's address. Such requests are logged at most
//     once per minute (with the number left unlogged), never per request.
//
// The issuer and resource URLs never come from here or from Host /
// X-Forwarded-Host: they are configuration.
package clientaddr

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Resolver computes client addresses. The zero value and nil trust no
// proxy. It is safe for concurrent use.
type Resolver struct {
	trusted []netip.Prefix
	log     *slog.Logger
	now     func() time.Time

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

// LogEvery is the shortest time between two log lines about malformed
// forwarding headers.
const LogEvery = time.Minute

// New returns a resolver trusting the given ranges; a nil logger discards.
func New(trusted []netip.Prefix, log *slog.Logger) *Resolver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Resolver{log: log, now: time.Now}
	for _, p := range trusted {
		r.trusted = append(r.trusted, p.Masked())
	}
	return r
}

// ParsePrefixes parses a comma-separated list of CIDRs or single addresses
// (taken as /32 or /128). It reports every entry it cannot read.
func ParsePrefixes(list string) ([]netip.Prefix, []string) {
	var out []netip.Prefix
	var bad []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil && a.Zone() == "" {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		bad = append(bad, f)
	}
	return out, bad
}

// Trusted reports whether a is in a trusted range.
func (r *Resolver) Trusted(a netip.Addr) bool {
	if r == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr returns the client address of req, as a string (an IP address when
// the peer is an IP peer; RemoteAddr unchanged otherwise).
func (r *Resolver) Addr(req *http.Request) string {
	peer, ok := peerAddr(req.RemoteAddr)
	if !ok {
		return hostOf(req.RemoteAddr)
	}
	if r == nil || len(r.trusted) == 0 || !r.Trusted(peer) {
		return peer.String()
	}
	fwd, hasFwd := req.Header["Forwarded"]
	xff, hasXFF := req.Header["X-Forwarded-For"]
	if !hasFwd && !hasXFF {
		return peer.String()
	}
	var fromFwd, fromXFF netip.Addr
	if hasFwd {
		hops, err := ParseForwarded(strings.Join(fwd, ","))
		if err != nil {
			r.malformed(req, "Forwarded", err)
			return peer.String()
		}
		fromFwd = r.walk(hops, peer)
	}
	if hasXFF {
		hops, err := ParseXForwardedFor(strings.Join(xff, ","))
		if err != nil {
			r.malformed(req, "X-Forwarded-For", err)
			return peer.String()
		}
		fromXFF = r.walk(hops, peer)
	}
	switch {
	case hasFwd && hasXFF && fromFwd != fromXFF:
		r.malformed(req, "Forwarded and X-Forwarded-For", errDisagree)
		return peer.String()
	case hasFwd:
		return fromFwd.String()
	default:
		return fromXFF.String()
	}
}

// walk applies the right-most-untrusted rule to hops (left to right, as
// in the header); prev starts as the peer, the hop that appended the last
// entry.
func (r *Resolver) walk(hops []Hop, prev netip.Addr) netip.Addr {
	for i := len(hops) - 1; i >= 0; i-- {
		h := hops[i]
		if !h.Addr.IsValid() { // unknown or obfuscated: the proxy that saw it is all we know
			return prev
		}
		if !r.Trusted(h.Addr) {
			return h.Addr
		}
		prev = h.Addr
	}
	return prev
}

type parseError string

func (e parseError) Error() string { return string(e) }

const errDisagree = parseError("the two headers name different clients")

// malformed logs a bad header from a trusted peer, at most once per
// LogEvery. The header's value is not logged: it is outside input of any
// length.
func (r *Resolver) malformed(req *http.Request, header string, err error) {
	now := r.now()
	r.mu.Lock()
	if !r.lastLog.IsZero() && now.Sub(r.lastLog) < LogEvery {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	n := r.suppressed
	r.lastLog, r.suppressed = now, 0
	r.mu.Unlock()
	r.log.WarnContext(req.Context(), "malformed forwarding header from a trusted proxy; using the proxy's address",
		"header", header, "problem", err.Error(), "peer", hostOf(req.RemoteAddr), "path", req.URL.Path,
		"not_logged_since_last", n)
}

// Hop is one entry of a forwarding header. Addr is invalid for a hop
// Forwarded names "unknown", by an obfuscated identifier, or not at all.
type Hop struct {
	Addr netip.Addr
}

func peerAddr(remote string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(hostOf(remote))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func hostOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

type ctxKey struct{}

// With returns ctx carrying the client address.
func With(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, ctxKey{}, addr)
}

// From returns the client address Middleware put in ctx, or "".
func From(ctx context.Context) string {
	a, _ := ctx.Value(ctxKey{}).(string)
	return a
}

// Middleware puts the client address of every request in its context
// (From), for handlers and audit entries deeper down.
func (r *Resolver) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		next.ServeHTTP(w, req.WithContext(With(req.Context(), r.Addr(req))))
	})
}

// Of returns the client address of req: the one Middleware stored, or the
// peer's host when none was.
func Of(req *http.Request) string {
	if a := From(req.Context()); a != "" {
		return a
	}
	return hostOf(req.RemoteAddr)
}

// LogKey is the attribute log records carry the client address under.
const LogKey = "client_addr"

// NewLogHandler wraps h so that every record logged with a context that
// carries a client address (Middleware, With) gets a client_addr
// attribute, unless it has one already.
func NewLogHandler(h slog.Handler) slog.Handler { return &logHandler{h} }

type logHandler struct{ slog.Handler }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if a := From(ctx); a != "" {
		has := false
		r.Attrs(func(at slog.Attr) bool {
			has = at.Key == LogKey
			return !has
		})
		if !has {
			r = r.Clone()
			r.AddAttrs(slog.String(LogKey, a))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{h.Handler.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{h.Handler.WithGroup(name)}
}
