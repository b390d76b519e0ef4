// Package fositestore implements fosite's storage interfaces on top of
// Linkslot's store: authorization codes, access and refresh tokens, PKCE and
// OpenID Connect sessions are store.TokenSession rows keyed by the SHA-256 of
// the token signature (a stolen table yields no usable token), and clients
// come from store.Clients. Backend is the part of store.Store it uses.
//
// Requests are serialized to JSON faithfully: id, time, client id,
// requested and granted scopes and audience, the (already sanitized) form,
// and the Session with its subject, link id, expiries, ID-token claims and
// extra values. The grant family (fosite's request id) is a column, so
// revoking a family is one UPDATE.
//
// Single use is enforced by the database, not by reading first: redeeming a
// code and rotating a refresh token are conditional deactivations in a
// store.TokenBatch, an UPDATE that exactly one of any number of concurrent
// callers wins. A used code answers fosite.ErrInvalidatedAuthorizeCode with
// its request (fosite then revokes every token issued from it); a used
// refresh token answers fosite.ErrInactiveToken (fosite then revokes the
// family). The store also implements fosite's storage.Transactional on
// store.Begin (tx.go), so the writes of one token response (consume, new
// access token, new refresh token) and a reuse revocation each commit
// together.
//
// The token endpoint's hot paths (docs/reference.md §9) cost few statements, through
// the combined statements of store.Tokens. They are chosen once, by
// configuration: on unless Options.NoReadCache or NoJoinedDeletes turn
// them off, as no server does. The state they keep between the storage
// calls of one HTTP request is a Request (request.go), which Store.Begin
// puts in the request's context; provider.Provider calls Begin at each of
// its entry points (token, authorize, revocation, introspection, client
// authentication) and carries the state from NewAccessRequest to
// NewAccessResponse itself, so no handler prepares a context and none can
// forget to: a storage call outside a begun request reads and writes the
// database directly, as fosite's plain storage would. What a request
// names that the storage needs (the redirect URI, a client assertion's
// algorithm) the provider reads from the request itself
// (WithRequestedRedirect, WithAssertionAlg); the client a caller has read
// already is given to the provider explicitly (provider.Known).
//   - Prefetch (called by provider.Provider before fosite) reads the client
//     and the presented refresh token with its link, or the code with its
//     PKCE and OpenID sessions, in one statement into the request's read
//     cache (readcache.go); fosite's reads are then answered from it.
//   - A transaction starts as a batch (tx.go): the deactivation and the new
//     sessions fosite writes in it are sent at Commit as one
//     store.TokenBatch, on PostgreSQL one statement and one commit. The
//     deactivation is still the conditional UPDATE that decides races; the
//     loser's batch writes nothing and its Commit answers the error the
//     storage call would have. Any other call inside the transaction
//     (a read, a family revocation) begins the database transaction and
//     writes the pending batch in it first.
//   - The authorize endpoint's transaction keeps a code's PKCE and OpenID
//     sessions in the code's own row (fold.go): an authorization writes
//     one row, and redeeming the code uses up all three. A failed request
//     (a wrong verifier) still uses up the PKCE session, at EndDeferral.
//   - Companions stored as rows of their own (outside that transaction,
//     or before folding) are read with the code by the same prefetch.
//     Redeeming such a code deletes its OpenID session in the same batch,
//     and (between BeginDeferral and EndDeferral) its PKCE session too; a
//     failed request still deletes the PKCE session, at EndDeferral
//     (joined.go).
//
// The refresh grace (grace.go, docs/refresh-grace.md) keeps its view of a
// request in the same Request, whatever fast paths are on: with
// Options.RefreshGrace set, the conditional UPDATE that spends a refresh
// token also records when, and its successor sealed with Options.Seal
// (store.TokenBatch.Rotation), in the same batch. The same token presented
// again within the grace, while the successor is unused, reads as active;
// the store then spends nothing and stores no refresh token, and writes
// the new access token in a batch that requires the successor still
// active (store.TokenBatch.Require); provider.Provider answers the
// successor. A rotation that loses its race at commit becomes such an
// answer, not a revocation. When the successor turns out used, the
// presented token is reuse: the family is revoked, invalid_grant.
//
// On PostgreSQL a refresh rotation is 2 statements and 1 commit, with the
// grace on or off; a grace answer 3 and 1 (the prefetch, the successor's
// row, the batch); a code exchange 2 and 1; the authorize step's writes 1
// (TestStatementCounts in authserver/authhttp holds PostgreSQL to them).
//
// Refresh tokens are refused when their link is no longer active, and their
// expiry is capped at the family's absolute lifetime (Session.GrantedAt +
// RefreshAbsolute). Expiry is checked against the injected clock as well as
// by fosite, so tests can age a code without sleeping.
package fositestore
