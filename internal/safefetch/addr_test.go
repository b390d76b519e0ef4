package safefetch_test

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/linkslot/linkslot/internal/safefetch"
)

// specialUse holds one address in every range the rules refuse, IPv4-mapped
// forms included.
var specialUse = []struct{ name, addr string }{
	{"unspecified v4", "0.0.0.0"},
	{"this network", "0.1.2.3"},
	{"unspecified v6", "::"},
	{"loopback v4", "127.0.0.1"},
	{"loopback v4 other", "127.5.6.7"},
	{"loopback v6", "::1"},
	{"private 10/8", "10.1.2.3"},
	{"private 172.16/12", "172.20.0.1"},
	{"private 192.168/16", "192.168.1.1"},
	{"cgnat 100.64/10", "100.64.0.1"},
	{"cgnat top", "100.127.255.254"},
	{"link-local v4", "169.254.1.1"},
	{"metadata", "169.254.169.254"},
	{"link-local v6", "fe80::1"},
	{"multicast v4", "224.0.0.1"},
	{"multicast v4 high", "239.255.255.250"},
	{"multicast v6", "ff02::1"},
	{"broadcast", "255.255.255.255"},
	{"reserved 240/4", "240.0.0.1"},
	{"ietf 192.0.0/24", "192.0.0.8"},
	{"documentation", "192.0.2.1"},
	{"benchmarking", "198.18.0.1"},
	{"ula fc00::/7", "fc00::1"},
	{"ula fd", "fd12:3456::1"},
	{"site-local", "fec0::1"},
	{"documentation v6", "2001:db8::1"},
	{"mapped loopback", "::ffff:127.0.0.1"},
	{"mapped private", "::ffff:10.0.0.1"},
	{"mapped metadata", "::ffff:169.254.169.254"},
	{"mapped cgnat", "::ffff:100.64.1.1"},
	{"ipv4-compatible", "::10.0.0.1"},
	{"nat64", "64:ff9b::a00:1"},
	{"6to4", "2002:a00:1::1"},
	{"teredo", "2001:0:4136:e378::1"},
}

func TestRulesRefuseSpecialUse(t *testing.T) {
	for _, c := range specialUse {
		t.Run(c.name, func(t *testing.T) {
			err := safefetch.Rules{}.Check(netip.MustParseAddr(c.addr))
			if !safefetch.IsAddressRefused(err) {
				t.Fatalf("Check(%s) = %v, want address_refused", c.addr, err)
			}
		})
	}
}

func TestRulesAdmitPublic(t *testing.T) {
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.128.0.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if err := (safefetch.Rules{}).Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", a, err)
		}
	}
}

func TestRulesLoopbackOnlyInDevelopment(t *testing.T) {
	dev := safefetch.Rules{AllowLoopback: true}
	for _, a := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1"} {
		if err := dev.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("development Check(%s) = %v, want nil", a, err)
		}
	}
	// Development admits loopback and nothing else.
	for _, a := range []string{"10.0.0.1", "169.254.169.254", "fd00::1", "100.64.0.1"} {
		if err := dev.Check(netip.MustParseAddr(a)); !safefetch.IsAddressRefused(err) {
			t.Errorf("development Check(%s) = %v, want refused", a, err)
		}
	}
}

// The Control hook refuses a real connection attempt to a live listener.
func TestDialerRefusesAtConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	res := resolver{"rebind.test": {"127.0.0.1"}}

	d := safefetch.NewDialer(safefetch.Rules{}, safefetch.DialOptions{Resolver: res})
	if _, err := d.DialContext(context.Background(), "tcp", "rebind.test:"+port); !safefetch.IsAddressRefused(err) {
		t.Fatalf("production dial to loopback = %v, want refused", err)
	}
	if _, err := d.DialContext(context.Background(), "tcp", ln.Addr().String()); !safefetch.IsAddressRefused(err) {
		t.Fatalf("production dial to a loopback literal = %v, want refused", err)
	}
	dev := safefetch.NewDialer(safefetch.Rules{AllowLoopback: true}, safefetch.DialOptions{Resolver: res})
	c, err := dev.DialContext(context.Background(), "tcp", "rebind.test:"+port)
	if err != nil {
		t.Fatalf("development dial to loopback: %v", err)
	}
	c.Close()
}

// resolver answers from a fixed table, like a DNS server under an
// attacker's control would.
type resolver map[string][]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}
