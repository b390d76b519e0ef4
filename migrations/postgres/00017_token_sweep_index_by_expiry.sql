-- +goose NO TRANSACTION
-- +goose Up
-- The janitor's index of token sessions leads with their expiry instead of
-- their kind. Led by kind, it served any condition on kind alone: once
-- ANALYZE had seen next to no PKCE or OpenID sessions (every code exchange
-- deletes its own), PostgreSQL planned the exchange's read of a code's
-- PKCE session, even by its full key (kind = 'pkce' AND signature_hash =
-- …), as a scan of that kind in this index, filtering the key afterwards:
-- a walk over the entry of every PKCE and OpenID session deleted since
-- the last vacuum, 1,000 to 1,700 buffers per code exchange in make
-- bench's database after its rotations, which halved the code flow's
-- rate. No token-path statement names an expiry, so led by expiry the
-- index serves the sweeps alone, which still find each batch in it (the
-- expired sessions oldest first, the kind read from the index); the
-- primary key is then the one index that leads with kind, and a session's
-- full key matches all of it. (The exchange also names each companion by
-- its key now, instead of by its request and kind, which the primary key
-- would serve by kind alone: sqlstore.PrefetchStatement.)
-- TestTokenPathPlansAtScale holds every token-path statement to a few
-- buffers after such an ANALYZE.
--
-- SQLite keeps token_sessions_kind_expires: it never runs ANALYZE, and
-- its planner prefers the index that matches more of a statement's
-- equalities (TestGrowingTablePlansSQLite).
--
-- Built CONCURRENTLY, so tokens stay writable; hence no transaction, and
-- each index is dropped first if an interrupted run left it invalid.
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_expires_kind;
CREATE INDEX CONCURRENTLY token_sessions_expires_kind ON token_sessions(expires_at, kind);
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_kind_expires;
RESET statement_timeout;

-- +goose Down
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_kind_expires;
CREATE INDEX CONCURRENTLY token_sessions_kind_expires ON token_sessions(kind, expires_at);
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_expires_kind;
RESET statement_timeout;
