// Package requestid gives every HTTP request an id that follows it through
// the logs of both Linkslot servers.
//
// Middleware accepts an incoming X-Request-Id when it is sane (1–64
// characters of letters, digits and - _ . :), so a request can be followed
// from a load balancer or an agent that already set one; otherwise it
// generates a fresh random id. The id is stored in the request context
// (From reads it), echoed in the X-Request-Id response header, and added to
// every log record by the slog handler that NewLogHandler wraps around the
// process's handler — so a log call only needs the request context
// (log.InfoContext(ctx, …)) to carry request_id.
//
// An incoming id is never trusted for anything but correlation; the strict
// alphabet keeps it from injecting into log lines.
package requestid
