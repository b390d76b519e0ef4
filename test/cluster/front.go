package cluster

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// Front is a reverse proxy in front of replicas, as an ingress is:
// net/http/httputil.ReverseProxy, round-robin over its backends, appending
// the client's address to X-Forwarded-For. It connects to the backends from
// its own loopback address (FromIP), so that the servers can tell it apart
// from clients that reach them directly.
type Front struct {
	URL    string // http://127.0.0.1:port
	FromIP string // the address the backends see it connect from

	backends atomic.Pointer[[]*url.URL]
	next     atomic.Uint64
}

// NewFront listens on loopback and proxies to the backends SetBackends
// names (502 until then); t.Cleanup closes it.
func NewFront(t testing.TB, fromIP string) *Front {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Front{URL: "http://" + l.Addr().String(), FromIP: fromIP}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			bs := f.backends.Load()
			if bs == nil || len(*bs) == 0 {
				return
			}
			pr.SetURL((*bs)[f.next.Add(1)%uint64(len(*bs))])
			pr.SetXForwarded() // appends the client's address to the X-Forwarded-For it sent
		},
		Transport: transportFrom(fromIP),
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return f
}

// SetBackends makes the front proxy to procs, in turn.
func (f *Front) SetBackends(procs []*Proc) {
	var bs []*url.URL
	for _, p := range procs {
		u, _ := url.Parse(p.Base)
		bs = append(bs, u)
	}
	f.backends.Store(&bs)
}

// ClientFrom returns an HTTP client whose connections come from the
// loopback address ip: a distinct client address as the front sees it.
func ClientFrom(ip string, jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: transportFrom(ip)}
}

// transportFrom returns a transport whose connections come from the
// loopback address ip.
func transportFrom(ip string) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
}
