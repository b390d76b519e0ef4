package metrics

import (
	"database/sql"
	"errors"
	"net/http"
	"regexp"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Other is the label value every unknown, malformed or over-limit value
// collapses to.
const Other = "other"

// Limits on distinct values per label. They are generous for the vocabulary
// docs/reference.md defines (8 tools, ~25 error codes, a few grants) and small
// enough that a misuse cannot create thousands of series.
const (
	maxRoutes   = 64
	maxOutcomes = 48
	maxSmall    = 16
)

// Metrics holds one service's collectors and their registry.
type Metrics struct {
	reg         *prometheus.Registry
	constLabels prometheus.Labels

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.Gauge
	tokens       *prometheus.CounterVec
	tools        *prometheus.CounterVec
	bookings     *prometheus.CounterVec
	replays      *prometheus.CounterVec
	refused      *prometheus.CounterVec
	fetches      *prometheus.CounterVec
	dbs          *dbCollector
	refreshGrace prometheus.Counter

	routes, codes                 *limiter
	grants, tokenOutcomes         *limiter
	toolNames, toolOutcomes       *limiter
	actions, replayTools, reasons *limiter
	fetchKinds, fetchOutcomes     *limiter
}

// New builds the collectors for service (for example "authserver") on a
// fresh registry, including the Go runtime and process collectors.
func New(service string) *Metrics {
	if service == "" {
		service = "linkslot"
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	cl := prometheus.Labels{"service": service}
	m := &Metrics{
		reg:         reg,
		constLabels: cl,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_http_requests_total", Help: "HTTP requests served, by route pattern and status code.", ConstLabels: cl,
		}, []string{"route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "linkslot_http_request_duration_seconds", Help: "HTTP request latency, by route pattern.", ConstLabels: cl,
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		httpInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "linkslot_http_requests_in_flight", Help: "HTTP requests being served now.", ConstLabels: cl,
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_tokens_issued_total", Help: "Token endpoint requests, by grant type and outcome (ok or the OAuth error code).", ConstLabels: cl,
		}, []string{"grant", "outcome"}),
		tools: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_tool_calls_total", Help: "MCP tool calls, by tool and outcome (ok, confirmation_required or the tool error code).", ConstLabels: cl,
		}, []string{"tool", "outcome"}),
		bookings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_bookings_total", Help: "Executed booking mutations, by action (created, rescheduled, cancelled).", ConstLabels: cl,
		}, []string{"action"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_idempotent_replays_total", Help: "Mutations answered from the idempotency store, by tool.", ConstLabels: cl,
		}, []string{"tool"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_grants_refused_total", Help: "Booking grants refused, by reason (invalid_grant, expired_grant).", ConstLabels: cl,
		}, []string{"reason"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "linkslot_fetches_total", Help: "Fetches of documents named by outside URLs (client metadata documents, client JWKS), by kind and outcome (ok, cached, or why it failed).", ConstLabels: cl,
		}, []string{"kind", "outcome"}),
		dbs: newDBCollector(cl),

		routes:        newLimiter(maxRoutes),
		codes:         newLimiter(maxSmall * 4),
		grants:        newLimiter(maxSmall),
		tokenOutcomes: newLimiter(maxOutcomes),
		toolNames:     newLimiter(maxSmall * 2),
		toolOutcomes:  newLimiter(maxOutcomes),
		actions:       newLimiter(maxSmall),
		replayTools:   newLimiter(maxSmall * 2),
		reasons:       newLimiter(maxSmall),
		fetchKinds:    newLimiter(maxSmall),
		fetchOutcomes: newLimiter(maxSmall),
	}
	reg.MustRegister(m.httpRequests, m.httpDuration, m.httpInFlight, m.tokens, m.tools,
		m.bookings, m.replays, m.refused, m.fetches, m.dbs)
	m.refreshGrace = newRefreshGrace(m)
	// Series that alerts compute rates over exist from the start at zero, so
	// the first event is a visible increase rather than a new series.
	for _, a := range []string{"created", "rescheduled", "cancelled"} {
		m.bookings.WithLabelValues(m.actions.value(a))
	}
	return m
}

// Registry is the registry the collectors live on, for a server that wants
// to add its own.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus exposition formats. On a nil
// Metrics it answers 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:          m.reg, // promhttp_metric_handler_errors_total
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// ObserveToken counts one token endpoint answer: grant is the grant_type
// ("authorization_code", "refresh_token"), outcome "ok" or the OAuth error
// code ("invalid_grant", "invalid_client", …).
func (m *Metrics) ObserveToken(grant, outcome string) {
	if m == nil {
		return
	}
	m.tokens.WithLabelValues(m.grants.value(grant), m.tokenOutcomes.value(outcome)).Inc()
}

// ObserveTool counts one tool call: outcome is "ok", "confirmation_required",
// or the error code of a failed result ("slot_taken", "invalid_grant", …).
func (m *Metrics) ObserveTool(tool, outcome string) {
	if m == nil {
		return
	}
	m.tools.WithLabelValues(m.toolNames.value(tool), m.toolOutcomes.value(outcome)).Inc()
}

// ObserveBooking counts one executed mutation: "created", "rescheduled" or
// "cancelled". Replays are not bookings; count them with ObserveReplay.
func (m *Metrics) ObserveBooking(action string) {
	if m == nil {
		return
	}
	m.bookings.WithLabelValues(m.actions.value(action)).Inc()
}

// ObserveReplay counts one mutation answered from the idempotency store.
func (m *Metrics) ObserveReplay(tool string) {
	if m == nil {
		return
	}
	m.replays.WithLabelValues(m.replayTools.value(tool)).Inc()
}

// ObserveGrantRefused counts one refused booking grant ("invalid_grant",
// "expired_grant"). The detailed cause stays out of the label on purpose:
// docs/reference.md §5 makes the invalid_grant causes indistinguishable.
func (m *Metrics) ObserveGrantRefused(reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(m.reasons.value(reason)).Inc()
}

// ObserveFetch counts one fetch of an outside document: kind is what was
// fetched ("cimd", "jwks"), outcome "ok", "cached" or the safefetch reason
// it failed ("address_refused", "redirect", "too_large", …).
func (m *Metrics) ObserveFetch(kind, outcome string) {
	if m == nil {
		return
	}
	m.fetches.WithLabelValues(m.fetchKinds.value(kind), m.fetchOutcomes.value(outcome)).Inc()
}

// RegisterDB exports the pool statistics of db under the label db=name
// ("main"). Registering the same name again replaces the earlier pool.
func (m *Metrics) RegisterDB(name string, db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.dbs.add(sanitize(name), db)
}

// limiter bounds the distinct values of one label.
type limiter struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLimiter(max int) *limiter { return &limiter{max: max, seen: make(map[string]struct{})} }

// value returns v if it is a well-formed label value that is already known
// or still fits under the limit, and Other otherwise.
func (l *limiter) value(v string) string {
	v = sanitize(v)
	if v == Other {
		return v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= l.max {
		return Other
	}
	l.seen[v] = struct{}{}
	return v
}

// A label value is a short identifier or route pattern: letters, digits and
// _ - . : / { } and single spaces ("POST /token", "/mcp",
// "GET /bookings/{id}"). Anything else (query strings, e-mail addresses,
// long opaque values) is Other.
var labelRE = regexp.MustCompile(`^[A-Za-z0-9_./:{}$\-]+( [A-Za-z0-9_./:{}$\-]+)?$`)

func sanitize(v string) string {
	if v == "" || len(v) > 64 || !labelRE.MatchString(v) {
		return Other
	}
	return v
}

// Shared registers c on reg and answers it, or answers the collector of
// the same description already registered there: two workers of one
// process on one registry (two servers in a test, say) share it. Any
// other registration error panics, as MustRegister does.
func Shared[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}
