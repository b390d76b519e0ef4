package authhttp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// addrResolver answers each host name with its address (tests of the
// special-use ranges).
type addrResolver map[string]string

func (r addrResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// newCIMDEnvWith is newCIMDEnv (policy registered) with mod applied last;
// the document host also answers under names, which resolve to loopback.
func newCIMDEnvWith(t *testing.T, mod func(*authhttp.Deps), names ...string) *cimdEnv {
	t.Helper()
	host := testkit.NewDocHost(t, names...)
	m := metrics.New("authserver")
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) {
		d.Config.CIMDPolicy = "registered"
		d.Fetch.RootCAs = host.CA.Pool()
		if len(names) > 0 {
			d.Fetch.Resolver = host.Resolver()
		}
		d.Metrics = m
		mod(d)
	})
	return &cimdEnv{env: e, host: host, m: m}
}

// A registered URL client whose document's host resolves into a
// special-use range ends on the error page, and nothing is fetched: one
// test per range (docs/reference.md §10).
func TestCIMDSpecialUseAddressRefused(t *testing.T) {
	ranges := addrResolver{
		"private-10.example": "10.0.0.7", "private-172.example": "172.16.5.4", "private-192.example": "192.168.1.20",
		"link-local.example": "169.254.10.10", "metadata.example": "169.254.169.254", "cgnat.example": "100.64.0.1",
		"multicast.example": "224.0.0.251", "unspecified.example": "0.0.0.0", "ipv6-ula.example": "fd12:3456::1",
		"ipv6-link-local.example": "fe80::1", "ipv6-mapped.example": "::ffff:10.0.0.7", "ipv6-multicast.example": "ff02::1",
	}
	e := newCIMDEnvWith(t, func(d *authhttp.Deps) { d.Fetch.Resolver = ranges })
	_, port, _ := net.SplitHostPort(e.host.Base[len("https://"):])
	for name := range ranges {
		t.Run(name, func(t *testing.T) {
			u := fmt.Sprintf("https://%s:%s/client.json", name, port)
			e.register(u, nil)
			e.refused(u, "", "points into a private or special-use network")
		})
	}
	if n := e.host.Hits("/client.json"); n != 0 {
		t.Fatalf("a special-use address was reached %d times", n)
	}
	if got := e.fetches("cimd", "address_refused"); got != float64(len(ranges)) {
		t.Fatalf("address_refused counted %v times, want %d", got, len(ranges))
	}
}

// Outside development a loopback document URL is refused by its address,
// and a public name that resolves to loopback when Linkslot connects.
func TestCIMDLoopbackRefusedInProduction(t *testing.T) {
	e := newCIMDEnvWith(t, func(d *authhttp.Deps) { d.Config.Production = true }, "rebinding.example")
	t.Run("localhost URL", func(t *testing.T) {
		u := e.publish("/prod.json", nil)
		e.register(u, nil)
		e.refused(u, "", "its address is on this computer, which only development servers accept")
	})
	t.Run("name resolving to loopback", func(t *testing.T) {
		u := e.host.At("rebinding.example") + "/prod.json"
		e.host.Put("/prod.json", http.StatusOK, doc(u, nil))
		e.register(u, nil)
		e.refused(u, "", "points into a private or special-use network")
	})
	if e.host.Hits("/prod.json") != 0 {
		t.Fatal("a loopback document host was fetched in production")
	}
}

// A document host whose certificate does not verify against the trust
// store is refused (and counted as tls).
func TestCIMDUntrustedCertificateRefused(t *testing.T) {
	e := newCIMDEnvWith(t, func(d *authhttp.Deps) { d.Fetch.RootCAs = testkit.NewCA(t).Pool() })
	e.refusedCounted(e.publish("/untrusted.json", nil), "certificate could not be verified", "tls")
}

// A document host that does not finish answering within the 5 s limit is
// refused (and counted as timeout).
func TestCIMDSlowDocumentRefused(t *testing.T) {
	e := newCIMDEnv(t, "registered", "")
	slow := e.host.CA.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"client_id":`))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}), "localhost")
	_, port, _ := net.SplitHostPort(slow.Listener.Addr().String())
	e.refusedCounted("https://localhost:"+port+"/slow.json", "did not answer in time", "timeout")
}

// refusedCounted registers u, checks that authorizing it ends on the error
// page saying want, and that the fetch was counted once under outcome.
func (e *cimdEnv) refusedCounted(u, want, outcome string) {
	e.t.Helper()
	e.register(u, nil)
	e.refused(u, "", want)
	if n := e.fetches("cimd", outcome); n != 1 {
		e.t.Fatalf("outcome %s counted %v times, want 1", outcome, n)
	}
}
