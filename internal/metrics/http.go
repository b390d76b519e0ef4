package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// HTTPMiddleware counts and times every request next serves.
//
// The route label is decided after next has run, first found wins:
//  1. a route recorded during the request with SetRoute (an Echo
//     middleware does this with c.Path(), which is only known once Echo
//     has routed);
//  2. route(r), when route is non-nil and returns non-empty — for a
//     net/http ServeMux pass Pattern, which reads r.Pattern as the mux
//     set it;
//  3. Other.
//
// route must return a pattern, never the raw URL path: paths carry ids.
// On a nil Metrics the middleware is next itself.
func (m *Metrics) HTTPMiddleware(route func(*http.Request) string, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.httpInFlight.Inc()
		defer m.httpInFlight.Dec()
		holder := &routeHolder{}
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, holder))
		rw := &statusWriter{ResponseWriter: w}
		defer func() {
			// A panicking handler is still counted (as 500, which is what
			// net/http's recovery answers) before the panic goes on.
			p := recover()
			if p != nil && !rw.wrote {
				rw.code = http.StatusInternalServerError
			}
			name := holder.route
			if name == "" && route != nil {
				name = route(r)
			}
			name = m.routes.value(name)
			m.httpRequests.WithLabelValues(name, m.codes.value(codeLabel(rw.status()))).Inc()
			m.httpDuration.WithLabelValues(name).Observe(time.Since(start).Seconds())
			if p != nil {
				panic(p)
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

// Pattern is a route function for a net/http ServeMux that next is (or
// reaches without copying the request): the pattern the mux recorded in
// r.Pattern ("GET /healthz"), or "" when none matched (counted as Other).
// If middleware between HTTPMiddleware and the mux replaces the request
// (r.WithContext), the mux records the pattern on the copy; use MuxRoute
// then.
func Pattern(r *http.Request) string { return r.Pattern }

// MuxRoute is a route function that asks mux which pattern r matches, so
// it works however many request-copying middlewares sit in between. It costs
// one extra route lookup per request.
func MuxRoute(mux *http.ServeMux) func(*http.Request) string {
	return func(r *http.Request) string {
		if r.Pattern != "" {
			return r.Pattern
		}
		_, pattern := mux.Handler(r)
		return pattern
	}
}

type routeKey struct{}

type routeHolder struct{ route string }

// SetRoute records the route pattern of the request whose context is ctx,
// for HTTPMiddleware further out. It does nothing when ctx did not come
// through HTTPMiddleware. Call it from inside the router, where the pattern
// is known: for Echo, in a middleware, metrics.SetRoute(c.Request().Context(), c.Path()).
func SetRoute(ctx context.Context, route string) {
	if h, ok := ctx.Value(routeKey{}).(*routeHolder); ok {
		h.route = route
	}
}

func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return Other
	}
	return strconv.Itoa(code)
}

// statusWriter remembers the status code. It keeps Flush working (the MCP
// endpoint streams) and exposes the underlying writer to
// http.ResponseController through Unwrap.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.code, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if !w.wrote {
		w.code, w.wrote = http.StatusOK, true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK // handler wrote nothing: net/http sends 200
	}
	return w.code
}

var _ http.Flusher = (*statusWriter)(nil)
