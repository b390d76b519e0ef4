package authhttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/admission"
	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// admissionSeries reads a linkslot_admission_* series of the authorization server.
func admissionSeries(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if label(s, "service") != "authserver" {
				continue
			}
			if s.Gauge != nil {
				return s.GetGauge().GetValue()
			}
			return s.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s{service=authserver}", name)
	return 0
}

// With every admission slot taken, the OAuth endpoints answer 503 with
// Retry-After — JSON with CORS for clients, a page for browsers — and run
// nothing; discovery and the key set, which need no database, still
// answer; once a slot frees the same request is served.
func TestBusyServerAnswers503(t *testing.T) {
	gate := admission.New(1, 50*time.Millisecond)
	m := metrics.New("authserver")
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) {
		d.Gate = gate
		d.Metrics = m
	})
	// Take the only slot with a request of our own.
	taken, free := make(chan struct{}), make(chan struct{})
	held := make(chan struct{})
	go func() {
		defer close(held)
		gate.Handler(func(http.ResponseWriter, *http.Request) { close(taken); <-free })(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/oauth2/token", nil))
	}()
	<-taken
	t.Cleanup(func() {
		select {
		case <-free:
		default:
			close(free)
		}
		<-held
	})

	const origin = "http://localhost:6274" // a loopback origin, allowed in development
	r := corsRequest(t, http.MethodPost, e.issuer+"/oauth2/token", origin)
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || r.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("token endpoint with every slot taken: %d %v", r.StatusCode, r.Header)
	}
	code, body, _ := e.tokenForm("/oauth2/token", map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {publicID}})
	if code != http.StatusServiceUnavailable || body["error"] != "temporarily_unavailable" || !strings.Contains(body["error_description"].(string), "Retry in a moment") {
		t.Fatalf("token endpoint: %d %v", code, body)
	}
	for _, p := range []string{"/oauth2/revoke", "/oauth2/introspect", "/userinfo"} {
		if r := corsRequest(t, http.MethodPost, e.issuer+p, origin); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
			t.Errorf("%s with every slot taken: %d %v", p, r.StatusCode, r.Header)
		}
	}
	c := e.oauth(publicID, "")
	req, _ := http.NewRequest(http.MethodGet, c.AuthCodeURL("state-1234567890"), nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9")
	resp, err := e.browser().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Location") != "" ||
		!strings.Contains(string(page), "Reload this page in a moment") {
		t.Fatalf("authorize with every slot taken: %d %v %s", resp.StatusCode, resp.Header, page)
	}
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/jwks.json", "/healthz"} {
		if r := corsRequest(t, http.MethodGet, e.issuer+p, ""); r.StatusCode != http.StatusOK {
			t.Errorf("%s while the OAuth endpoints are busy: %d", p, r.StatusCode)
		}
	}
	if got := admissionSeries(t, m, "linkslot_admission_refused_total"); got != 6 {
		t.Errorf("refused = %v, want 6", got)
	}

	close(free)
	<-held
	code, body, _ = e.tokenForm("/oauth2/token", map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {publicID}})
	if code != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("token endpoint once a slot is free: %d %v, want 400 invalid_grant", code, body)
	}
}

// Without a gate of its own the server sizes one at twice the
// database pool it is given (Deps.PoolSize), and says so in its metrics.
func TestGateSizedFromThePool(t *testing.T) {
	s := sqltest.SQLite(t)
	m := metrics.New("authserver")
	newEnvWith(t, s, func(d *authhttp.Deps) { d.Metrics, d.PoolSize = m, s.PoolSize() })
	if got, want := admissionSeries(t, m, "linkslot_admission_slots"), float64(admission.Size(s.PoolSize())); got != want || want < 2 {
		t.Fatalf("linkslot_admission_slots = %v, want %v (twice the pool of %d)", got, want, s.PoolSize())
	}
	if got := admissionSeries(t, m, "linkslot_admission_running"); got != 0 {
		t.Fatalf("running = %v at rest", got)
	}
}

// A client that sends its body slowly holds no slot: the body is read in
// full (limitBodies) before the request queues for one.
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	gate := admission.New(1, 200*time.Millisecond)
	e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) { d.Gate = gate })
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.issuer, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const body = "grant_type=refresh_token&refresh_token=nope&client_id=" + publicID
	fmt.Fprintf(conn, "POST /oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:10])
	time.Sleep(50 * time.Millisecond) // the server is now reading the rest
	for i := 0; i < 3; i++ {
		code, got, _ := e.tokenForm("/oauth2/token", map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {publicID}})
		if code != http.StatusBadRequest || got["error"] != "invalid_grant" {
			t.Fatalf("token request beside a slow body: %d %v, want 400 invalid_grant", code, got)
		}
	}
	// The slow request, once its body is complete, is served too.
	fmt.Fprint(conn, body[10:])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the slow request got %d, want 400", resp.StatusCode)
	}
}
