// Package admin is the one place where Linkslot's administrative operations
// live: registering OAuth clients (create, list, show, update, disable,
// enable, delete, rotate secret), creating, finding, showing, disabling and
// enabling accounts and granting the admin role, importing and exporting the business catalog, switching agent
// booking, and reading the audit log.
//
// Every change is written together with its audit event (store.AuditEvent:
// actor, action such as client.create, target, before/after JSON and the
// request id) inside one store.InTx transaction, seen as Tx, so there is
// never a change without its record nor a record of a change that rolled
// back. The before/after documents are built from views that have no secret in them:
// client secret hashes and password hashes are never serialized, and a
// rotated secret is returned to the caller exactly once and stored only as
// its hash (internal/clients.HashSecret).
//
// The three front ends — the JSON API (adminapi), the admin pages (consent-ui/admin)
// and the command line (admincli) — authenticate the caller, turn it into an
// Actor and call the Service; none of them writes to the store directly.
//
// Disabling a client only sets Client.Disabled: the authorization server
// reads the client on every request and refuses it at once, and the
// resource server's token check caches client and link status for at most
// five seconds. Disabling an account (SetUserDisabled) also deletes its
// browser sessions and revokes every active link with its token sessions
// (store.RevokeLink), in the transaction that records it, so the person is
// signed out at once and the resource server refuses their apps' access
// tokens within the same five seconds; enabling it again does not bring
// the links back.
package admin
