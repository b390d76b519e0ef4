// Package dcr is dynamic client registration (RFC 7591) and its
// management protocol (RFC 7592), for the MCP clients that have no client
// ID metadata document (Cursor) and for Claude's fallback when a document
// cannot be used (docs/reference.md §14, docs/dynamic-registration.md).
//
// LINKSLOT_DCR_POLICY is off by default: nothing registers and the
// authorization server advertises no registration_endpoint. Under open,
// anyone may register a client, so what a registration may do is bounded
// here:
//
//   - Parse reads the request: JSON at most MaxBodyBytes; public clients
//     (token_endpoint_auth_method none, the default) or shared-secret ones
//     (client_secret_basic, client_secret_post); grant types
//     authorization_code and refresh_token, response type code; redirect
//     URIs that internal/clients accepts (https, http on a loopback host,
//     or a private-use scheme in reverse-DNS form). Every field it keeps
//     is checked; unknown fields are ignored. A refusal is an *Error with
//     the RFC 7591 code and a description naming the field.
//   - The requested scope is cut to LINKSLOT_DCR_SCOPES (CutScopes).
//   - Service.Register counts registrations per client address in the
//     shared rate windows (at most LINKSLOT_DCR_RATE an hour, across
//     replicas), then writes the client, its registration and an audit
//     event in one transaction. The client id is DynamicPrefix and 160
//     random bits; the registration access token and the client secret
//     are 256 random bits, answered once and stored hashed (the token as
//     SHA-256, the secret as internal/clients stores every client
//     secret), and compared in constant time.
//   - Service.Read and Service.Delete are RFC 7592's GET and DELETE on the
//     registration client URI, authenticated by the registration access
//     token. A wrong token and an unknown client answer the same
//     ErrUnauthorized. Updates (PUT) are not offered: a client registers
//     anew and deletes the old registration.
//
// A registration nobody links within UnusedLifetime (24 h) is deleted by
// the janitor (store.Sweeps.SweepUnusedRegistrations). Administrators list,
// disable and delete dynamic clients like any other (kind dcr).
package dcr
