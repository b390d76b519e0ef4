// Package adminapi is Linkslot's JSON admin API, mounted by the
// authorization server at /admin/api/. Every route calls internal/admin's
// Service, which validates, writes and audits in one transaction; this
// package only authenticates, decodes and encodes.
//
// The API is never open: each request must pass the Authenticator (the
// admin bearer token from LINKSLOT_ADMIN_TOKEN, an administrator's consent
// UI session, or both through AnyOf); without one every request answers
// 401. Errors are one JSON shape, {"error": {"code", "message",
// "problems"}}, written by one function; unexpected failures are logged
// with the request id and answered as server_error without detail. No
// answer carries a secret except the create and rotate-secret answers of a
// confidential client or a webhook endpoint, which show its new secret
// that once. Every answer
// is Cache-Control: no-store.
//
// Routes (all JSON unless noted):
//
//	GET    /admin/api/clients                       {"clients": [...]}
//	POST   /admin/api/clients                       201 {"client": {...}, "client_secret": "…" (confidential only)}
//	GET    /admin/api/clients/{id}                  {"client": {...}}
//	PATCH  /admin/api/clients/{id}                  {"client": {...}}   (any of name, redirect_uris, allowed_scopes, default_scopes, grant_types, logo_url, contact, id_token_signed_response_alg)
//	DELETE /admin/api/clients/{id}                  204
//	POST   /admin/api/clients/{id}/disable|enable   {"client": {...}}
//	POST   /admin/api/clients/{id}/rotate-secret    {"client": {...}, "client_secret": "…"}
//	POST   /admin/api/users                         201 {"account": {...}}   body {"email","password","admin"}
//	POST   /admin/api/users/{email}/admin           {"account": {...}}       body {"admin": true|false}
//	GET    /admin/api/users?query=&limit=&offset=   {"users": [...], "has_more", "next_offset"}   (query: part of the email)
//	GET    /admin/api/users/{email}                 {"account": {...}, "links": [...]}
//	POST   /admin/api/users/{email}/disable|enable  {"account": {...}}   (disable also ends sessions and revokes links)
//	POST   /admin/api/catalog                       {"imported": [refs]}     body: the file, Content-Type application/json or application/yaml; its own deadline (authhttp.ImportTimeout)
//	GET    /admin/api/catalog?format=json|yaml      the file
//	GET    /admin/api/businesses                    {"businesses": [...]}
//	POST   /admin/api/businesses/{ref}/agent-booking {"business": {...}}    body {"enabled": true|false}
//	GET    /admin/api/audit?limit=&offset=          {"events": [...], "has_more", "next_offset"}
//	GET    /admin/api/webhooks?business=REF         {"webhooks": [...]}
//	POST   /admin/api/webhooks                      201 {"webhook": {...}, "secret": "whsec_…"}   body {"business","url","events"} (events empty: all of them)
//	GET    /admin/api/webhooks/{id}                 {"webhook": {...}}
//	PATCH  /admin/api/webhooks/{id}                 {"webhook": {...}}   (any of url, events)
//	DELETE /admin/api/webhooks/{id}                 204   (with its delivery log)
//	POST   /admin/api/webhooks/{id}/disable|enable  {"webhook": {...}}
//	POST   /admin/api/webhooks/{id}/rotate-secret   {"webhook": {...}, "secret": "whsec_…"}
//	GET    /admin/api/webhooks/{id}/deliveries?limit=            {"deliveries": [...]}   newest first, each with its attempts ("log")
//	GET    /admin/api/webhooks/deliveries?status=&channel=&limit= {"deliveries": [...]}  (status failed: the ones waiting for a replay; e-mail too)
//	POST   /admin/api/webhooks/deliveries/{id}/replay             {"delivery": {...}}    queued again now with its id (the webhook-id); 409 when delivered or being delivered
//
// Error codes: unauthorized (401), forbidden (403, signed in without the
// admin role), invalid_request / invalid_json / invalid_catalog (400, with
// problems [{path, message}]), not_found (404), method_not_allowed (405),
// already_exists / conflict (409), too_large (413, the body), request_too_large
// (413, a catalog of more than catalogfile.MaxBusinesses businesses, with
// the limit in the message), unsupported_media_type
// (415), server_error (500).
package adminapi
