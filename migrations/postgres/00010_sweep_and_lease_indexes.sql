-- +goose Up
-- The janitor deletes a kind's expired token sessions in batches, oldest
-- first (SweepTokenSessions: kind = ? AND expires_at < ? ORDER BY
-- expires_at); an index by kind and expiry finds each batch exactly. It
-- replaces the index by expiry alone, read only by PurgeTokenSessions,
-- which tests call and no server does, so every token insert maintains the
-- same number of indexes.
-- Building it blocks writes to token_sessions for as long as it takes (a
-- second or two per million rows); statement_timeout does not apply here.
SET LOCAL statement_timeout = 0;
CREATE INDEX token_sessions_kind_expires ON token_sessions(kind, expires_at);
DROP INDEX token_sessions_expires;

-- +goose Down
SET LOCAL statement_timeout = 0;
CREATE INDEX token_sessions_expires ON token_sessions(expires_at);
DROP INDEX token_sessions_kind_expires;
