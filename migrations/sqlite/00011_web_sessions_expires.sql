-- +goose Up
-- The janitor deletes expired sign-in sessions in batches, oldest first
-- (SweepWebSessions); until now nothing deleted a session that was never
-- presented again, so the table only grew.
CREATE INDEX web_sessions_expires ON web_sessions(expires_at);

-- +goose Down
DROP INDEX web_sessions_expires;
