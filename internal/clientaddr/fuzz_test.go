package clientaddr

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// FuzzForwarded: the parser never panics; every hop it returns is either
// unknown or a valid address without a zone; the resolver's answer is
// always the peer or one of the addresses the headers name.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{
		"for=192.0.2.43",
		`for="[2001:db8:cafe::17]:4711"`,
		"for=192.0.2.60;proto=http;by=203.0.113.43",
		"for=192.0.2.43, for=198.51.100.17",
		`for="_gazonk"`, "for=unknown", `for="192.0.2.1:_port"`,
		`for="\[::1\]"`, ";;,,", "proto=https", "for=", `for="`, "for=[::1]",
		"FOR=10.0.0.1;For=10.0.0.2",
	} {
		f.Add(s, "198.51.100.1, 10.0.0.2")
	}
	r := New([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}, nil)
	f.Fuzz(func(t *testing.T, fwd, xff string) {
		hops, err := ParseForwarded(fwd)
		if err == nil {
			if len(hops) == 0 || len(hops) > MaxHops {
				t.Fatalf("%d hops", len(hops))
			}
			for _, h := range hops {
				if h.Addr.IsValid() && (h.Addr.Zone() != "" || h.Addr.Is4In6()) {
					t.Fatalf("hop %v", h.Addr)
				}
			}
		}
		xhops, xerr := ParseXForwardedFor(xff)
		if xerr == nil {
			for _, h := range xhops {
				if !h.Addr.IsValid() {
					t.Fatal("X-Forwarded-For hop without an address")
				}
			}
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "10.0.0.9:80"
		req.Header.Set("Forwarded", fwd)
		req.Header.Set("X-Forwarded-For", xff)
		got := r.Addr(req)
		if err != nil || xerr != nil {
			if got != "10.0.0.9" {
				t.Fatalf("a malformed header gave %q, not the peer", got)
			}
			return
		}
		if got == "10.0.0.9" {
			return
		}
		a, perr := netip.ParseAddr(got)
		if perr != nil {
			t.Fatalf("answer %q is not an address", got)
		}
		for _, h := range append(hops, xhops...) {
			if h.Addr == a {
				return
			}
		}
		t.Fatalf("answer %s is neither the peer nor a hop", a)
	})
}
