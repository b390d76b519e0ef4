package metrics_test

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	_ "github.com/glebarez/go-sqlite" // the pure-Go SQLite driver the store uses

	"github.com/linkslot/linkslot/internal/metrics"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// openDB opens a real SQLite database file for the pool collector.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", t.TempDir()+"/metrics.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	return db
}

// scrape fetches h over HTTP, as Prometheus would, and parses the text
// exposition.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", res.Status)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, body)
	}
	return fams
}

// series returns the label sets of family name as "k=v,k=v" strings
// (service omitted), mapped to their value.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("family %s missing", name)
	}
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var parts []string
		service := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "service" {
				service = l.GetValue()
				continue
			}
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		if service != "resourceserver" {
			t.Errorf("%s{%s}: service label %q", name, strings.Join(parts, ","), service)
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Histogram != nil:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		out[key(strings.Join(parts, ","))] = v
	}
	return out
}

// key sorts the k=v parts of a series key, so tests can write labels in
// any order.
func key(s string) string {
	parts := strings.Split(s, ",")
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// TestScrapeAfterFlow drives a small server through the middleware the way
// the resource server does (mux patterns, a tool call flow with a
// confirmation, an execution, a replay and a refused grant) and checks
// every family with the labels it must carry.
func TestScrapeAfterFlow(t *testing.T) {
	m := metrics.New("resourceserver")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mux.HandleFunc("GET /bookings/{ref}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusInternalServerError) })
	srv := httptest.NewServer(m.HTTPMiddleware(metrics.Pattern, mux))
	defer srv.Close()

	for _, req := range []struct{ method, path string }{
		{"POST", "/mcp"}, {"POST", "/mcp"},
		{"GET", "/bookings/BK-7Q2M"}, {"GET", "/bookings/BK-9ZZZ"},
		{"GET", "/boom"},
		{"GET", "/no/such/path/alice@example.com"},
	} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, nil)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	m.ObserveToken("authorization_code", "ok")
	m.ObserveToken("refresh_token", "invalid_grant")
	m.ObserveTool("create_my_booking", "confirmation_required")
	m.ObserveTool("create_my_booking", "ok")
	m.ObserveBooking("created")
	m.ObserveTool("create_my_booking", "ok")
	m.ObserveReplay("create_my_booking")
	m.ObserveTool("cancel_my_booking", "invalid_grant")
	m.ObserveGrantRefused("invalid_grant")
	m.ObserveTool("reschedule_my_booking", "slot_taken")
	m.ObserveBooking("rescheduled")
	m.ObserveBooking("cancelled")
	m.ObserveFetch("cimd", "ok")
	m.ObserveFetch("cimd", "cached")
	m.ObserveFetch("cimd", "cached")
	m.ObserveFetch("jwks", "address_refused")

	db := openDB(t)
	m.RegisterDB("main", db)

	fams := scrape(t, m.Handler())

	want := map[string]map[string]float64{
		"linkslot_http_requests_total": {
			"route=POST /mcp,code=202":           2,
			"route=GET /bookings/{ref},code=200": 2,
			"route=GET /boom,code=500":           1,
			"route=other,code=404":               1,
		},
		"linkslot_http_request_duration_seconds": {
			"route=POST /mcp": 2, "route=GET /bookings/{ref}": 2, "route=GET /boom": 1, "route=other": 1,
		},
		"linkslot_tokens_issued_total": {
			"grant=authorization_code,outcome=ok":       1,
			"grant=refresh_token,outcome=invalid_grant": 1,
		},
		"linkslot_tool_calls_total": {
			"tool=create_my_booking,outcome=confirmation_required": 1,
			"tool=create_my_booking,outcome=ok":                    2,
			"tool=cancel_my_booking,outcome=invalid_grant":         1,
			"tool=reschedule_my_booking,outcome=slot_taken":        1,
		},
		"linkslot_bookings_total":           {"action=created": 1, "action=rescheduled": 1, "action=cancelled": 1},
		"linkslot_idempotent_replays_total": {"tool=create_my_booking": 1},
		"linkslot_fetches_total": {
			"kind=cimd,outcome=ok": 1, "kind=cimd,outcome=cached": 2, "kind=jwks,outcome=address_refused": 1,
		},
		"linkslot_grants_refused_total":    {"reason=invalid_grant": 1},
		"linkslot_http_requests_in_flight": {"": 0},
	}
	for name, w := range want {
		got := series(t, fams, name)
		norm := map[string]float64{}
		for k, v := range w {
			norm[key(k)] = v
		}
		if fmt.Sprint(got) != fmt.Sprint(norm) {
			t.Errorf("%s:\n got  %v\n want %v", name, got, w)
		}
	}
	dbSeries := series(t, fams, "linkslot_db_connections")
	for _, k := range []string{"db=main,state=in_use", "db=main,state=idle"} {
		if _, ok := dbSeries[key(k)]; !ok {
			t.Errorf("linkslot_db_connections{%s} missing; have %v", k, dbSeries)
		}
	}
	if up := series(t, fams, "linkslot_db_up"); up["db=main"] != 1 {
		t.Errorf("linkslot_db_up = %v, want db=main:1", up)
	}
	db.Close()
	if up := series(t, scrape(t, m.Handler()), "linkslot_db_up"); up["db=main"] != 0 {
		t.Errorf("linkslot_db_up after close = %v, want db=main:0", up)
	}
	for _, name := range []string{"linkslot_db_max_open_connections", "linkslot_db_wait_count_total",
		"linkslot_db_wait_duration_seconds_total", "linkslot_db_closed_total",
		"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("family %s missing", name)
		}
	}
	// No raw path, id or address leaks into any label.
	for name, f := range fams {
		for _, mm := range f.GetMetric() {
			for _, l := range mm.GetLabel() {
				if strings.Contains(l.GetValue(), "BK-") || strings.Contains(l.GetValue(), "@") {
					t.Errorf("%s label %s=%q leaks request data", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestDBStatsFollowPool checks the pool collector reads live stats.
func TestDBStatsFollowPool(t *testing.T) {
	m := metrics.New("resourceserver")
	db := openDB(t)
	m.RegisterDB("main", db)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	inUse := series(t, scrape(t, m.Handler()), "linkslot_db_connections")[key("db=main,state=in_use")]
	conn.Close()
	if inUse < 1 {
		t.Fatalf("in_use = %v while a connection is held", inUse)
	}
}

// TestCardinalityBounded feeds hostile and unbounded label values and
// checks the series count stays bounded and the values collapse to other.
func TestCardinalityBounded(t *testing.T) {
	m := metrics.New("resourceserver")
	h := m.HTTPMiddleware(func(r *http.Request) string { return r.URL.Path }, // a misuse: raw paths
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i := range 1000 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/bookings/%d", i), nil))
		m.ObserveTool(fmt.Sprintf("tool_%d", i), fmt.Sprintf("code_%d", i))
		m.ObserveToken("refresh_token", fmt.Sprintf("user%d@example.com", i))
		m.ObserveGrantRefused(fmt.Sprintf("reason %d with spaces and more", i))
	}
	fams := scrape(t, m.Handler())
	limits := map[string]int{
		"linkslot_http_requests_total":  64 + 1,
		"linkslot_tool_calls_total":     32*48 + 1,
		"linkslot_tokens_issued_total":  1,
		"linkslot_grants_refused_total": 1,
	}
	for name, max := range limits {
		got := series(t, fams, name)
		if len(got) > max {
			t.Errorf("%s has %d series, limit %d", name, len(got), max)
		}
	}
	if got := series(t, fams, "linkslot_tokens_issued_total"); got[key("grant=refresh_token,outcome=other")] != 1000 {
		t.Errorf("e-mail outcomes did not collapse to other: %v", got)
	}
	if got := series(t, fams, "linkslot_http_requests_total"); got[key("route=other,code=200")] == 0 {
		t.Errorf("over-limit routes did not collapse to other")
	}
}

// TestSetRoute is the Echo path: the route is known only inside the router.
func TestSetRoute(t *testing.T) {
	m := metrics.New("resourceserver")
	h := m.HTTPMiddleware(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.SetRoute(r.Context(), "/bookings/:ref")
		w.WriteHeader(http.StatusTeapot)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/bookings/BK-1", nil))
	got := series(t, scrape(t, m.Handler()), "linkslot_http_requests_total")
	if got[key("route=/bookings/:ref,code=418")] != 1 {
		t.Fatalf("got %v", got)
	}
}

// TestPanicCounted: a panicking handler is counted as 500 and the panic
// still reaches net/http.
func TestPanicCounted(t *testing.T) {
	m := metrics.New("resourceserver")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := m.HTTPMiddleware(metrics.Pattern, mux)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic swallowed")
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/panic", nil))
	}()
	if got := series(t, scrape(t, m.Handler()), "linkslot_http_requests_total"); got[key("route=GET /panic,code=500")] != 1 {
		t.Fatalf("got %v", got)
	}
}

// TestFlushPassesThrough: streaming responses still flush through the
// middleware.
func TestFlushPassesThrough(t *testing.T) {
	m := metrics.New("resourceserver")
	h := m.HTTPMiddleware(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if !rec.Flushed {
		t.Fatal("not flushed")
	}
}

// TestNilMetrics: every method is a no-op on nil, the middleware is the
// handler itself, the metrics handler answers 404.
func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveToken("a", "b")
	m.ObserveTool("a", "b")
	m.ObserveBooking("created")
	m.ObserveReplay("a")
	m.ObserveGrantRefused("invalid_grant")
	m.ObserveFetch("cimd", "ok")
	m.RegisterDB("main", nil)
	if m.Registry() != nil {
		t.Fatal("nil registry expected")
	}
	called := false
	h := m.HTTPMiddleware(metrics.Pattern, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if !called {
		t.Fatal("handler not called")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("nil handler answered %d", rec.Code)
	}
}

// TestIndependentRegistries: two Metrics in one process do not collide.
func TestIndependentRegistries(t *testing.T) {
	a, b := metrics.New("resourceserver"), metrics.New("resourceserver")
	a.ObserveBooking("created")
	if got := series(t, scrape(t, b.Handler()), "linkslot_bookings_total"); got["action=created"] != 0 {
		t.Fatalf("b saw a's booking: %v", got)
	}
}

// TestSigningKeyAge exports the current key's creation time per purpose
// from a real store.
func TestSigningKeyAge(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		created := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
		for i, k := range []store.SigningKey{
			{ID: "kid-old-" + t.Name(), CreatedAt: created.Add(-90 * 24 * time.Hour)},
			{ID: "kid-new-" + t.Name(), CreatedAt: created},
		} {
			k.Purpose, k.Algorithm = "token", "ES256"
			k.PrivateEncrypted, k.PublicJWK = []byte{byte(i)}, []byte(`{}`)
			if err := s.CreateSigningKey(t.Context(), k); err != nil {
				t.Fatal(err)
			}
		}
		m := metrics.New("resourceserver")
		m.RegisterSigningKeys(s, "token", "grant")
		m.RegisterSigningKeys(s, "token") // a second call is harmless
		fams := scrape(t, m.Handler())
		if got := series(t, fams, "linkslot_signing_key_created_timestamp_seconds"); len(got) != 1 || got["purpose=token"] != float64(created.Unix()) {
			t.Fatalf("created: %v, want purpose=token:%d", got, created.Unix())
		}
		if got := series(t, fams, "linkslot_signing_keys"); got["purpose=token"] != 2 || got["purpose=grant"] != 0 {
			t.Fatalf("count: %v", got)
		}
	})
}

// TestMuxRoute: a request-copying middleware between HTTPMiddleware and
// the mux hides r.Pattern; MuxRoute still finds the pattern.
func TestMuxRoute(t *testing.T) {
	m := metrics.New("resourceserver")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bookings/{ref}", func(w http.ResponseWriter, r *http.Request) {})
	copying := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(r.Context()))
	})
	m.HTTPMiddleware(metrics.Pattern, copying).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/bookings/BK-1", nil))
	m.HTTPMiddleware(metrics.MuxRoute(mux), copying).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/bookings/BK-2", nil))
	m.HTTPMiddleware(metrics.MuxRoute(mux), copying).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nowhere/BK-3", nil))
	got := series(t, scrape(t, m.Handler()), "linkslot_http_requests_total")
	want := map[string]float64{
		key("route=other,code=200"):               1, // Pattern through a copy
		key("route=GET /bookings/{ref},code=200"): 1,
		key("route=other,code=404"):               1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
