// Package metrics is Linkslot's Prometheus instrumentation, shared by the
// authorization server and the resource server.
//
// Each server builds one *Metrics with New, passing its service name
// ("authserver" or "resourceserver"). A Metrics owns its own registry — there
// are no package-level collectors and nothing is registered on the
// prometheus default registry — so tests and several servers in one process
// never collide. Handler serves that registry; the servers mount it on a
// separate listener (LINKSLOT_AUTH_METRICS_LISTEN, LINKSLOT_RS_METRICS_LISTEN) so metrics are never reachable
// through the public ingress.
//
// Families (every linkslot_* family also carries a constant service label):
//
//	linkslot_http_requests_total{route,code}           counter
//	linkslot_http_request_duration_seconds{route}      histogram
//	linkslot_http_requests_in_flight                   gauge
//	linkslot_tokens_issued_total{grant,outcome}        counter
//	linkslot_refresh_grace_total                       counter (refreshes answered within LINKSLOT_REFRESH_GRACE)
//	linkslot_tool_calls_total{tool,outcome}            counter
//	linkslot_bookings_total{action}                    counter
//	linkslot_idempotent_replays_total{tool}            counter
//	linkslot_grants_refused_total{reason}              counter
//	linkslot_fetches_total{kind,outcome}               counter (safefetch: cimd, jwks)
//	linkslot_db_up{db}                                 gauge (a ping at scrape time)
//	linkslot_db_connections{db,state}                  gauge (state: in_use, idle)
//	linkslot_db_max_open_connections{db}               gauge
//	linkslot_db_wait_count_total{db}                   counter
//	linkslot_db_wait_duration_seconds_total{db}        counter
//	linkslot_db_closed_total{db,reason}                counter (max_idle, max_idle_time, max_lifetime)
//	linkslot_signing_key_created_timestamp_seconds{purpose}  gauge (RegisterSigningKeys)
//	linkslot_signing_keys{purpose}                     gauge
//	go_*, process_*                                    the standard runtime collectors
//
// Wiring. Wrap the server's handler with HTTPMiddleware. For a net/http
// ServeMux pass MuxRoute(mux) as the route function. For Echo pass nil, and
// in an e.Use middleware call SetRoute(c.Request().Context(),
// c.Request().Method+" "+c.Path()): Echo knows the route only after it has
// routed. Call the Observe methods where the event is decided, and
// RegisterDB / RegisterSigningKeys once at start. Serve Handler on
// the server's own metrics address.
//
// Label cardinality is bounded by construction. The HTTP route label is the
// route pattern ("POST /token", "/mcp"), never the raw path, and a request no
// route matched is counted as "other". Every label value passes through a
// limiter: values must be short snake/dash identifiers, and each label admits
// a fixed number of distinct values; anything beyond collapses to "other".
// So a bug that passes a booking reference or an e-mail address as an
// outcome cannot explode the series count or leak personal data into the
// metrics.
//
// Every method is safe on a nil *Metrics and does nothing, so a server runs
// unchanged with metrics turned off.
package metrics
