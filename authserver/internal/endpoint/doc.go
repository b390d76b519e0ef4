// Package endpoint holds the authorization server's HTTP surface: the
// discovery documents (RFC 8414 and OpenID Connect, one JSON body), the
// JWKS, and the OAuth endpoints on top of the fosite provider — authorize
// (with sign-in and consent), token, revocation, introspection and userinfo.
//
// Errors take one of two paths, decided explicitly (as in Dex):
//
//   - displayed: an unknown or disabled client, or a redirect URI that does
//     not match the registration, is shown to the person on an error page
//     and never redirected to (RFC 6749 §4.1.2.1);
//   - redirected: once the client and redirect URI are known good, every
//     authorize error goes back to the client with error, state and iss
//     (RFC 9207).
//
// Token, revocation, introspection and userinfo errors are JSON written by
// one writer (writeJSONError) with Cache-Control: no-store. Any error fosite
// classifies as server_error, or that is not an RFC 6749 error at all, is
// logged with the request path and sent as a bare server_error: internal
// messages, tokens and secrets never reach a client or a log line.
//
// The authorize state machine:
//
//	validate client + redirect (else error page)
//	  → fosite validation, PKCE S256, resource (RFC 8707), prompt and
//	    max_age (else redirect error)
//	  → not signed in: prompt=none login_required, else UI.LoginRedirect
//	    back to the same authorize URL
//	  → prompt=login, max_age=0, or a sign-in older than max_age:
//	    prompt=none login_required, else UI.ReauthRedirect, the sign-in
//	    page even for a signed-in person, back to the authorize URL with
//	    FieldAuthAfter, which a sign-in from then on meets
//	  → POST decision=deny: access_denied; decision=allow (CSRF checked):
//	    identity's Approvals.Approve (the link, and at the first approval
//	    the "app connected" e-mail) and the code in one transaction
//	  → active link covering the scopes, and no prompt=consent or
//	    select_account: issue the code (remembered consent)
//	  → prompt=none: consent_required
//	  → otherwise UI.RenderConsent, which posts back here.
//
// The code's OpenID session carries the person's sign-in time as
// auth_time (consent.SignIn) and the request's time as rat; fosite's
// OpenID Connect validator checks prompt and max_age against them once
// more (docs/prompt-and-max-age.md).
//
// Reads: the signed-in person (the sign-in session with its account, one
// statement, before anything else), then a registered client together
// with the person's active link to it (store GetClientLink, one
// statement), so that an authorization with remembered consent is three
// statements with the code's write.
//
// One transaction per code: the authorize response opens fosite's
// transaction (fositestore), and an approval is written through its
// database transaction (TxStore) before fosite stores the code, PKCE and
// OpenID sessions in it, so a failure anywhere leaves no link, no e-mail
// and no code. Remembered consent writes only the code.
//
// Scopes: a request for openid alone, or for nothing, is granted openid plus
// the client's default scopes; any other request is granted exactly what it
// names, and fosite refuses anything beyond the client's allowed set with
// invalid_scope.
package endpoint
