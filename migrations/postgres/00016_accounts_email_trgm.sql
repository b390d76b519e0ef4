-- +goose NO TRANSACTION
-- +goose Up
-- The administrators' account search finds addresses that contain the
-- text they type (LIKE '%text%'), which no B-tree can serve: it read every
-- account. A trigram index serves any text of three characters or more
-- (pg_trgm, already required by the business search). Accounts are
-- written at sign-up and on changes of address, so the index costs
-- nothing on any request path. SQLite keeps the scan (docs/design.md, "Design choices").
-- TestAccountSearchAtScale holds the search to it.
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS accounts_email_trgm;
CREATE INDEX CONCURRENTLY accounts_email_trgm ON accounts USING gin (email gin_trgm_ops);
RESET statement_timeout;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS accounts_email_trgm;
