// Package cimd is client ID metadata documents (docs/reference.md §10,
// draft-ietf-oauth-client-id-metadata-document): clients whose client_id is
// the https URL of a JSON document describing them.
//
// Parse applies the document rules: the URL is https with a path (http or
// https to localhost or a loopback address in development), without
// fragment, user information or dot segments; the document is a JSON
// object whose client_id equals that URL byte for byte, with a client_name
// and redirect_uris that each pass the redirect rules every client follows;
// token_endpoint_auth_method is none (the default) or private_key_jwt with
// jwks_uri or jwks; shared-secret methods and a client_secret are refused;
// id_token_signed_response_alg, when present, is ES256 or RS256 and chooses
// the algorithm of the client's ID tokens.
// Every other field, grant type and response type is ignored: VS Code
// lists device_code, and that must not break it.
//
// Resolver decides whether a URL client may link under the policy
// (LINKSLOT_CIMD_POLICY):
//
//   - registered (default): only URLs an administrator registered. An
//     unknown URL is refused without fetching it.
//   - open: any valid document may link. A client first seen this way is
//     recorded (OpenLinked) when the person approves it, so that its link
//     has a client; it may hold the public scopes and at most the private
//     scopes of LINKSLOT_CIMD_OPEN_SCOPES, whatever its record says.
//   - off: URL client IDs are refused and not advertised.
//
// A registered URL client keeps its scopes, its disabled flag and an
// optional pinned copy of its document in its store.Client record; its
// name, redirect URIs and authentication come from the document, fetched
// through safefetch (cached by the document's own headers, failures never
// cached). Every refusal is a *Refusal with a title and a sentence a person
// understands; the authorization endpoint shows it on its error page and
// never redirects.
package cimd
