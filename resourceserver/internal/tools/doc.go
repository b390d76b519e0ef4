// Package tools holds Linkslot's MCP tools. Each handler reads the caller's
// identity from its context (tokencheck.IdentityFrom: put there once by the
// router after bearer verification, never taken from tool arguments; the
// request id travels in the same context), validates its arguments,
// calls the domain — the booking engine for the read tools, the mutation
// service (internal/mutation) for the three mutations — and renders the
// answer.
//
// Answers follow docs/reference.md §4: a result's structuredContent matches the
// tool's declared outputSchema and the same JSON is repeated as text (the
// SDK does not re-check each answer against its schema — see registry —
// the tests check every answer they receive). A
// business failure is a result with isError true and structuredContent
// {"error": {"code", "message", "field"?, ...}}, so every output schema
// carries an optional "error" object and requires nothing at the top level.
// Input schemas are inferred from the Go input types by the SDK; the SDK's
// own schema-validation failures (a wrong type, a missing or unknown
// property) are rewritten by a receiving middleware into invalid_argument
// results that name the field, and ranges, formats and enumerations are
// checked in the handlers, so an agent always gets a code and a next step
// instead of a validator message.
//
// Scopes are decided before the SDK sees a call (the router answers 403 with
// a step-up challenge); RequiredScope tells it what each tool needs. The
// per-link rate limit is checked here, so that an agent that calls too fast
// gets a rate_limited result with retry_after_sec it can act on.
package tools
