// Package consentui serves the pages a person sees on the Linkslot
// authorization server: sign-up, sign-in, sign-out, the consent page, the
// account page (change password), My bookings (cancel), Connected apps
// (disconnect) and Activity.
// Pages are html/template templates, one stylesheet and one script
// (static/passkey.js), embedded in the binary; nothing but passkeys needs
// JavaScript.
//
// It implements consent.UI, the boundary the authorize endpoint talks to:
// the endpoint decides what must happen (sign in, approve, show an error)
// and this package owns sessions, CSRF, headers and templates. Account
// rules (passwords, throttling, sessions, links) live in internal/identity.
//
// Sessions. The session cookie carries 32 random bytes; the database keeps
// only their hash. Sign-in always creates a new session and deletes the one
// the browser had (rotation). Cookies are HttpOnly, SameSite=Lax, Path=/,
// and Secure with the __Host- prefix when the issuer is https.
//
// CSRF. Every form carries the field consent.CSRFField. Its value is an
// HMAC-SHA256, under a key derived from the secret key, of the browser's
// session cookie, or, before sign-in, of a random anonymous cookie set with
// the form (a signed double-submit cookie). A POST whose token is missing or
// does not match answers 403 with a page that explains the form expired and
// how to start again. The token needs no database read.
//
// Headers. Every answer carries Content-Security-Policy (default-src
// 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action …;
// frame-ancestors 'none'; base-uri 'none'), X-Content-Type-Options:
// nosniff and Referrer-Policy: no-referrer; every page carries
// Cache-Control: no-store. Chromium applies form-action to the redirects
// that follow a form submission (checked with Chromium 156: a POST answered
// by a 302 to another origin is blocked under form-action 'self' and goes
// through once that origin is listed), so a page whose form can end in a redirect
// to the OAuth client (the consent page, and the sign-in page when consent
// is already remembered) adds the origin of the client's redirect_uri to
// form-action; when that is not known it adds the redirect targets the
// reference allows: https: and the loopback origins http://127.0.0.1:*,
// http://localhost:* and http://[::1]:*. Every other page has form-action
// 'self'.
//
// Signing in again: /login?reauth=1 (consent.AuthorizeUI's ReauthRedirect,
// for OpenID Connect prompt=login and max_age) shows the sign-in page even
// to a signed-in person, filled in with their address and saying the app
// asks to be sure it is them; the new sign-in is a new session, whose
// creation is the auth_time of the ID tokens that follow.
//
// Redirects after sign-in go only to same-origin paths ("next" must start
// with a single "/", contain no backslash and no scheme or host); anything
// else falls back to the account page, with a notice.
//
// E-mail links: /verify?token=… confirms an address, POST
// /account/verify/resend sends a new link (from the account page and from
// the consent page of an unconfirmed account, which has no Allow), and
// /password/forgot → /password/reset?token=… sets a new password. A refused
// link answers a page that says whether it expired, was used or is not
// valid, and offers a new one; the token is never logged (only paths are)
// and Referrer-Policy: no-referrer keeps it out of other sites' logs.
//
// My bookings: /account/bookings lists the person's bookings in three tabs
// (upcoming, past, cancelled) through the booking engine's MyBookings, in
// the business's zone; /account/bookings/cancel (bookings.go) is the web
// front end of mutation.Service.Cancel with Channel ChannelWeb: the GET is
// the preview and renders the service's summary as is, the POST sends the
// five confirmation fields (the summary from the form, a key generated for
// that form, a fixed confirmation text naming the button) and renders the
// Outcome; problem.Error refusals are put in words for a person.
//
// Your data: /account/export answers the account's JSON document
// (export.go); /account/delete (delete.go) re-checks the password, cancels
// upcoming bookings through the mutation service as ChannelWeb with the
// summary it computes and a fixed confirmation text, then erases the
// account (store.AccountErasure) and ends the session.
//
// Passkeys (passkeys.go, internal/passkey): /account/passkeys adds, lists,
// renames and removes them; the sign-in page's "Sign in with a passkey"
// posts to /login/passkey; the delete page's "Delete with a passkey" posts
// the same /account/delete form with a passkey answer instead of the
// password. A page that offers a ceremony starts it as it renders and
// carries its options in the form's data-options attribute; passkey.js
// runs navigator.credentials and submits the form with the JSON answer in
// its "credential" field. The script makes no request of its own, so the
// CSP needs nothing beyond script-src 'self'; the forms are hidden until
// the script shows them, so without JavaScript the pages work as before.
// With an issuer whose host is an IP address the account and passkeys
// pages say why passkeys are unavailable and no page offers them.
//
// Sign-up answers a new and an already registered address the same way
// (identity.SignUpNotice) and never signs in automatically, so the page does
// not reveal whether an account exists.
package consentui
