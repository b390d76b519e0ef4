package safefetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admission"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/testkit"
)

type doc struct {
	Name string `json:"name"`
}

func decodeDoc(_ string, body []byte) (doc, error) {
	var d doc
	if err := json.Unmarshal(body, &d); err != nil {
		return d, err
	}
	if d.Name == "" {
		return d, errors.New("name is missing")
	}
	return d, nil
}

// host is an HTTPS document host on loopback, reached as docs.test through
// the test resolver, with a certificate from a test CA.
type host struct {
	t     *testing.T
	ca    *testkit.CA
	base  string // https://docs.test:PORT
	port  string
	hits  sync.Map // path -> *atomic.Int64
	mux   *http.ServeMux
	clock *clock
	outcomes
}

type outcomes struct {
	mu  sync.Mutex
	got []string
}

func (o *outcomes) observe(kind, outcome string) {
	o.mu.Lock()
	o.got = append(o.got, kind+":"+outcome)
	o.mu.Unlock()
}

func (o *outcomes) last() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.got) == 0 {
		return ""
	}
	return o.got[len(o.got)-1]
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func newHost(t *testing.T) *host {
	h := &host{t: t, ca: testkit.NewCA(t), mux: http.NewServeMux(), clock: &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}}
	srv := h.ca.StartTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := h.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		h.mux.ServeHTTP(w, r)
	}), "docs.test")
	u, _ := url.Parse(srv.URL)
	_, h.port, _ = net.SplitHostPort(u.Host)
	h.base = "https://docs.test:" + h.port
	return h
}

func (h *host) handle(path string, f http.HandlerFunc) string {
	h.mux.HandleFunc(path, f)
	return h.base + path
}

func (h *host) count(path string) int64 {
	n, ok := h.hits.Load(path)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

func (h *host) fetcher(mod func(*safefetch.Options[doc])) *safefetch.Fetcher[doc] {
	o := safefetch.Options[doc]{
		Kind:        "test",
		Development: true, // the host is on loopback
		Decode:      decodeDoc,
		Resolver:    resolver{"docs.test": {"127.0.0.1"}},
		RootCAs:     h.ca.Pool(),
		Now:         h.clock.Now,
		Observe:     h.observe,
	}
	if mod != nil {
		mod(&o)
	}
	return safefetch.New(o)
}

func jsonDoc(cacheControl string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		fmt.Fprint(w, `{"name":"Example","unknown_field":[1,2,3]}`)
	}
}

func wantReason(t *testing.T, err error, want safefetch.Reason) {
	t.Helper()
	if got := safefetch.ReasonOf(err); got != want {
		t.Fatalf("error = %v (reason %q), want reason %q", err, got, want)
	}
}

func TestFetchOKOverVerifiedTLS(t *testing.T) {
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc(""))
	d, err := h.fetcher(nil).Get(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "Example" {
		t.Fatalf("got %+v", d)
	}
	if h.last() != "test:ok" {
		t.Fatalf("outcome %q, want test:ok", h.last())
	}
}

func TestFetchUntrustedCertificate(t *testing.T) {
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc(""))
	_, err := h.fetcher(func(o *safefetch.Options[doc]) { o.RootCAs = nil }).Get(context.Background(), u)
	wantReason(t, err, safefetch.ReasonTLS)
}

// Every special-use range, answered by the resolver for a name, is refused
// when the socket connects.
func TestFetchRefusesSpecialUseAddresses(t *testing.T) {
	h := newHost(t)
	for _, c := range specialUse {
		t.Run(c.name, func(t *testing.T) {
			f := h.fetcher(func(o *safefetch.Options[doc]) {
				o.Development = false
				o.Resolver = resolver{"evil.test": {c.addr}}
			})
			_, err := f.Get(context.Background(), "https://evil.test:"+h.port+"/client.json")
			wantReason(t, err, safefetch.ReasonAddress)
			if h.last() != "test:address_refused" {
				t.Fatalf("outcome %q", h.last())
			}
		})
	}
}

// Outside development a name that resolves to loopback is refused even
// though a server answers there; in development it is fetched.
func TestFetchLoopbackOnlyInDevelopment(t *testing.T) {
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc(""))
	_, err := h.fetcher(func(o *safefetch.Options[doc]) { o.Development = false }).Get(context.Background(), u)
	wantReason(t, err, safefetch.ReasonAddress)
	if h.count("/client.json") != 0 {
		t.Fatal("the server was reached")
	}
	if _, err := h.fetcher(nil).Get(context.Background(), u); err != nil {
		t.Fatalf("development: %v", err)
	}
}

func TestFetchURLRules(t *testing.T) {
	h := newHost(t)
	for _, c := range []struct {
		name string
		url  string
		dev  bool
	}{
		{"http outside development", "http://127.0.0.1:" + h.port + "/x", false},
		{"http to a public host in development", "http://example.com/x", true},
		{"ftp", "ftp://docs.test/x", true},
		{"no host", "https:///x", true},
		{"user info", "https://user:pw@docs.test:" + h.port + "/x", true},
		{"not a URL", "https://docs.test:%zz/", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.fetcher(func(o *safefetch.Options[doc]) { o.Development = c.dev }).Get(context.Background(), c.url)
			wantReason(t, err, safefetch.ReasonURL)
		})
	}
	if _, err := safefetch.CheckURL("http://localhost:8080/x", true); err != nil {
		t.Errorf("http://localhost in development: %v", err)
	}
	if _, err := safefetch.CheckURL("http://[::1]:8080/x", true); err != nil {
		t.Errorf("http://[::1] in development: %v", err)
	}
}

func TestFetchRefusesRedirect(t *testing.T) {
	h := newHost(t)
	target := h.handle("/elsewhere.json", jsonDoc(""))
	u := h.handle("/client.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	_, err := h.fetcher(nil).Get(context.Background(), u)
	wantReason(t, err, safefetch.ReasonRedirect)
	if h.count("/elsewhere.json") != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestFetchStatusAndType(t *testing.T) {
	h := newHost(t)
	notFound := h.handle("/missing.json", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	created := h.handle("/created.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"name":"x"}`)
	})
	html := h.handle("/page.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `{"name":"x"}`)
	})
	broken := h.handle("/broken.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":`)
	})
	suffix := h.handle("/suffix.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json; charset=utf-8")
		fmt.Fprint(w, `{"name":"x"}`)
	})
	f := h.fetcher(nil)
	_, err := f.Get(context.Background(), notFound)
	wantReason(t, err, safefetch.ReasonStatus)
	_, err = f.Get(context.Background(), created)
	wantReason(t, err, safefetch.ReasonStatus)
	_, err = f.Get(context.Background(), html)
	wantReason(t, err, safefetch.ReasonNotJSON)
	_, err = f.Get(context.Background(), broken)
	wantReason(t, err, safefetch.ReasonNotJSON)
	if _, err := f.Get(context.Background(), suffix); err != nil {
		t.Fatalf("+json type: %v", err)
	}
}

func TestFetchOversizedBody(t *testing.T) {
	h := newHost(t)
	big := `{"name":"` + strings.Repeat("a", 5<<10) + `"}`
	withLength := h.handle("/big.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		fmt.Fprint(w, big)
	})
	chunked := h.handle("/chunked.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i < len(big); i += 512 {
			fmt.Fprint(w, big[i:min(i+512, len(big))])
			w.(http.Flusher).Flush()
		}
	})
	f := h.fetcher(nil)
	_, err := f.Get(context.Background(), withLength)
	wantReason(t, err, safefetch.ReasonTooLarge)
	_, err = f.Get(context.Background(), chunked)
	wantReason(t, err, safefetch.ReasonTooLarge)

	// The limit is an option: a larger one admits the same body.
	if _, err := h.fetcher(func(o *safefetch.Options[doc]) { o.MaxBytes = 64 << 10 }).Get(context.Background(), chunked); err != nil {
		t.Fatalf("with a larger limit: %v", err)
	}
}

func TestFetchSlowBody(t *testing.T) {
	h := newHost(t)
	release := make(chan struct{})
	defer close(release)
	u := h.handle("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":`)
		w.(http.Flusher).Flush()
		select { // the rest never comes in time
		case <-release:
		case <-r.Context().Done():
		}
	})
	_, err := h.fetcher(func(o *safefetch.Options[doc]) { o.Timeout = 300 * time.Millisecond }).Get(context.Background(), u)
	wantReason(t, err, safefetch.ReasonTimeout)
	if h.last() != "test:timeout" {
		t.Fatalf("outcome %q", h.last())
	}
}

func TestFetchCacheHonoursCacheControl(t *testing.T) {
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc("public, max-age=3600"))
	f := h.fetcher(nil)
	for i := 0; i < 2; i++ {
		if _, err := f.Get(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.count("/client.json"); n != 1 {
		t.Fatalf("two gets fetched %d times, want 1", n)
	}
	if h.last() != "test:cached" {
		t.Fatalf("outcome %q, want test:cached", h.last())
	}
	h.clock.Add(59 * time.Minute)
	f.Get(context.Background(), u)
	if n := h.count("/client.json"); n != 1 {
		t.Fatalf("fetched %d times within max-age", n)
	}
	h.clock.Add(2 * time.Minute)
	f.Get(context.Background(), u)
	if n := h.count("/client.json"); n != 2 {
		t.Fatalf("fetched %d times after max-age, want 2", n)
	}
}

func TestFetchCacheBounds(t *testing.T) {
	for _, c := range []struct {
		name, cacheControl string
		stillCached        time.Duration
		refetched          time.Duration
	}{
		{"short max-age raised to 5 min", "max-age=10", 4 * time.Minute, 6 * time.Minute},
		{"no-store raised to 5 min", "no-store", 4 * time.Minute, 6 * time.Minute},
		{"no header means 5 min", "", 4 * time.Minute, 6 * time.Minute},
		{"long max-age capped at 24 h", "max-age=31536000", 23 * time.Hour, 25 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t)
			u := h.handle("/client.json", jsonDoc(c.cacheControl))
			f := h.fetcher(nil)
			f.Get(context.Background(), u)
			h.clock.Add(c.stillCached)
			f.Get(context.Background(), u)
			if n := h.count("/client.json"); n != 1 {
				t.Fatalf("after %v fetched %d times, want 1", c.stillCached, n)
			}
			h.clock.Add(c.refetched - c.stillCached)
			f.Get(context.Background(), u)
			if n := h.count("/client.json"); n != 2 {
				t.Fatalf("after %v fetched %d times, want 2", c.refetched, n)
			}
		})
	}
}

func TestFetchNeverCachesFailure(t *testing.T) {
	h := newHost(t)
	var fail atomic.Bool
	fail.Store(true)
	u := h.handle("/flaky.json", func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.Header().Set("Cache-Control", "max-age=3600")
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		jsonDoc("max-age=3600")(w, r)
	})
	invalid := h.handle("/invalid.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		fmt.Fprint(w, `{"other":"no name"}`)
	})
	f := h.fetcher(nil)
	_, err := f.Get(context.Background(), u)
	wantReason(t, err, safefetch.ReasonStatus)
	fail.Store(false)
	if _, err := f.Get(context.Background(), u); err != nil {
		t.Fatalf("after the failure: %v", err)
	}
	if n := h.count("/flaky.json"); n != 2 {
		t.Fatalf("fetched %d times, want 2", n)
	}
	for i := 0; i < 2; i++ {
		_, err := f.Get(context.Background(), invalid)
		wantReason(t, err, safefetch.ReasonInvalid)
	}
	if n := h.count("/invalid.json"); n != 2 {
		t.Fatalf("invalid document fetched %d times, want 2 (never cached)", n)
	}
	if h.last() != "test:invalid" {
		t.Fatalf("outcome %q", h.last())
	}
}

func TestFetchForget(t *testing.T) {
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc("max-age=3600"))
	f := h.fetcher(nil)
	f.Get(context.Background(), u)
	f.Forget(u)
	f.Get(context.Background(), u)
	if n := h.count("/client.json"); n != 2 {
		t.Fatalf("fetched %d times, want 2", n)
	}
}

func TestFetchConcurrentGetsShareOneRequest(t *testing.T) {
	h := newHost(t)
	gate := make(chan struct{})
	u := h.handle("/client.json", func(w http.ResponseWriter, r *http.Request) {
		<-gate
		jsonDoc("max-age=600")(w, r)
	})
	f := h.fetcher(nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Get(context.Background(), u); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // let the goroutines queue up behind the first
	close(gate)
	wg.Wait()
	if n := h.count("/client.json"); n != 1 {
		t.Fatalf("8 concurrent gets fetched %d times, want 1", n)
	}
}

func TestErrorNeverCarriesBody(t *testing.T) {
	h := newHost(t)
	u := h.handle("/secret.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "SECRET-BODY-CONTENT")
	})
	_, err := h.fetcher(nil).Get(context.Background(), u+"?token=SECRET-QUERY")
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error %v", err)
	}
	if d := safefetch.ReasonOf(err).Describe(); d == "" || strings.Contains(d, "SECRET") {
		t.Fatalf("describe %q", d)
	}
}

// A request admitted by the authorization server's gate gives its slot back
// while it waits on the remote host, so a slow host cannot hold the gate
// shut; a cached answer keeps the slot (package admission).
func TestFetchLendsTheAdmissionSlot(t *testing.T) {
	h := newHost(t)
	arrived, answer := make(chan struct{}), make(chan struct{})
	u := h.handle("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-answer
		jsonDoc("max-age=600")(w, r)
	})
	var once sync.Once
	answered := func() { once.Do(func() { close(answer) }) }
	t.Cleanup(answered) // before the host closes, which waits for its handlers
	f := h.fetcher(nil)
	gate := admission.New(1, 100*time.Millisecond)
	serve := func(handler http.HandlerFunc) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		gate.Handler(handler)(rec, httptest.NewRequest(http.MethodGet, "/oauth2/authorize", nil))
		return rec
	}
	fetched := make(chan error, 1)
	go serve(func(w http.ResponseWriter, r *http.Request) {
		_, err := f.Get(r.Context(), u)
		fetched <- err
	})
	<-arrived
	if rec := serve(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }); rec.Code != http.StatusNoContent {
		t.Fatalf("a request during the fetch got %d: the fetch kept the only slot", rec.Code)
	}
	answered()
	if err := <-fetched; err != nil {
		t.Fatal(err)
	}
	// From the cache: the slot stays with the request.
	held := make(chan struct{})
	go serve(func(w http.ResponseWriter, r *http.Request) {
		if _, err := f.Get(r.Context(), u); err != nil {
			t.Error(err)
		}
		close(held)
		time.Sleep(300 * time.Millisecond)
	})
	<-held
	if rec := serve(func(http.ResponseWriter, *http.Request) {}); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("a request while the slot is held got %d, want 503", rec.Code)
	}
}
