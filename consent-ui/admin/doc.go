// Package adminui is the administrators' pages under /admin: clients (list,
// register, edit, disable/enable, rotate secret, delete), businesses with
// their agent-booking switch, and the audit log. Pages are server-rendered
// from embedded html/template files and need no JavaScript.
//
// The pages borrow the consent UI's session, CSRF and sign-in through the
// consent.UI interface, so a person signs in once for both. Only accounts
// with the admin role get in: nobody signed in is sent to sign in, anyone
// else gets a 403 page. Every POST must carry the consent UI's CSRF token.
// Every change goes through internal/admin's Service, which audits it in
// the same transaction; this package never touches the store. Answers carry
// the consent pages' security headers (CSP with frame-ancestors 'none',
// nosniff, no-referrer) and Cache-Control: no-store, because a page may
// show a client secret once.
package adminui
