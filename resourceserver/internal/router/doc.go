// Package router wires the resource server's HTTP surface on Echo:
//
//	GET  /healthz, /readyz                             liveness and readiness (internal/app)
//	GET  /.well-known/oauth-protected-resource[/mcp]   RFC 9728 metadata
//	POST /mcp                                          MCP Streamable HTTP (stateless)
//	GET, DELETE, … /mcp                                405, Allow: POST
//
// A POST to /mcp passes, in order: the per-address rate limit (429 with
// Retry-After), the Origin check (403 unless absent, the resource's own
// origin, a configured origin, or a loopback origin when the resource is on
// loopback), the Host check for a loopback resource (DNS rebinding), the
// 1 MiB body limit (413), the batch refusal (a JSON array answers a 400
// JSON-RPC error), bearer verification (exactly one Authorization header,
// "Bearer" and one b64token, see internal/authheader: a second header
// answers 400 invalid_request, a malformed one 401 invalid_token; no header
// 401 with a WWW-Authenticate challenge naming the metadata URL and scope
// "openid"), and the per-tool
// scope check, which peeks at the JSON-RPC body: a tools/call of a tool
// whose scope the token lacks answers 403 insufficient_scope naming the
// scopes to ask for, so a read-only link reads freely and is stepped up
// only when it writes. The verified identity then enters the request's
// context once (tokencheck.WithIdentity) and travels with the context's other
// values (request id, deadline) to the tool handlers, never in tool
// arguments. Options.Auth is the only way in: the benchmarks' baseline with
// authentication off passes an Authenticator that accepts any token.
//
// The SDK's own localhost Host protection is switched off (it would refuse
// every request a reverse proxy forwards to a loopback listener); the
// Origin check above, and our Host check when the public resource itself
// is on loopback, take its place.
//
// Every request runs under Options.Timeout (LINKSLOT_REQUEST_TIMEOUT): its
// context's deadline bounds the token check and the tool's database work,
// and the tools end their work a moment earlier so that a database that
// stops answering yields the retryable server_error, not a hung caller.
//
// Every answer carries X-Request-Id and every log line the same id.
package router
