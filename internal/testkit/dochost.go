package testkit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// DocHost is an HTTPS server on loopback, reached as https://localhost:PORT
// with a certificate from its own test CA, that serves the documents a test
// puts on it (client ID metadata documents, key sets) and counts the
// requests for each path.
type DocHost struct {
	CA   *CA
	Base string // https://localhost:PORT

	port  string
	names []string

	mu   sync.Mutex
	docs map[string]hostedDoc
	hits map[string]int
}

type hostedDoc struct {
	status int
	header http.Header
	body   string
}

// NewDocHost starts a DocHost; it stops when the test ends. Its
// certificate also names each of names (such as "app.example"), reached as
// At(name) through Resolver, so a page can show the host a real client
// would have.
func NewDocHost(t testing.TB, names ...string) *DocHost {
	t.Helper()
	h := &DocHost{CA: NewCA(t), names: names, docs: map[string]hostedDoc{}, hits: map[string]int{}}
	srv := h.CA.StartTLS(t, http.HandlerFunc(h.serve), append([]string{"localhost", "127.0.0.1"}, names...)...)
	h.Base = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, h.port, _ = net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	return h
}

// At is https://name:PORT, the host reached under one of its names.
func (h *DocHost) At(name string) string { return "https://" + net.JoinHostPort(name, h.port) }

// Resolver answers the host's names with the loopback address and refuses
// every other name; it satisfies safefetch.Resolver.
func (h *DocHost) Resolver() NameResolver { return NameResolver{names: h.names} }

// NameResolver is DocHost.Resolver.
type NameResolver struct{ names []string }

// LookupNetIP answers 127.0.0.1 for a DocHost name.
func (r NameResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	for _, n := range r.names {
		if strings.EqualFold(n, host) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	}
	return nil, &net.DNSError{Err: fmt.Sprintf("%s is not a name of the test document host", host), Name: host, IsNotFound: true}
}

// Put serves body at path with status and the given headers (pairs of
// name, value); Content-Type defaults to application/json. It returns the
// document's URL.
func (h *DocHost) Put(path string, status int, body string, headers ...string) string {
	hd := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(headers); i += 2 {
		hd.Set(headers[i], headers[i+1])
	}
	h.mu.Lock()
	h.docs[path] = hostedDoc{status: status, header: hd, body: body}
	h.mu.Unlock()
	return h.Base + path
}

// Hits is how many requests path has had.
func (h *DocHost) Hits(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

func (h *DocHost) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hits[r.URL.Path]++
	d, ok := h.docs[r.URL.Path]
	h.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	for k, v := range d.header {
		w.Header()[k] = v
	}
	w.WriteHeader(d.status)
	_, _ = w.Write([]byte(d.body))
}
