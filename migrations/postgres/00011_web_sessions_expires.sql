-- +goose Up
-- The janitor deletes expired sign-in sessions in batches, oldest first
-- (SweepWebSessions); until now nothing deleted a session that was never
-- presented again, so the table only grew.
-- Building it blocks writes to the table for as long as it takes;
-- statement_timeout does not apply here.
SET LOCAL statement_timeout = 0;
CREATE INDEX web_sessions_expires ON web_sessions(expires_at);

-- +goose Down
DROP INDEX web_sessions_expires;
