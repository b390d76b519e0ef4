-- +goose Up
-- The janitor deletes a kind's expired token sessions in batches, oldest
-- first (SweepTokenSessions: kind = ? AND expires_at < ? ORDER BY
-- expires_at). With the index by expiry alone SQLite searched the primary
-- key by kind and sorted every session of that kind, live ones included,
-- holding the write lock all the while; the index by kind and expiry finds
-- each batch exactly, and replaces the other, read only by
-- PurgeTokenSessions, which tests call and no server does.
CREATE INDEX token_sessions_kind_expires ON token_sessions(kind, expires_at);
DROP INDEX token_sessions_expires;

-- The outbox worker leases due queued messages, soonest first
-- (LeaseMessages: status = 'queued' AND next_attempt_at <= ? ORDER BY
-- next_attempt_at). SQLite's planner preferred the index by status and
-- creation to the partial index by due time, and sorted every queued
-- message, retries scheduled for later included, once a second; an index
-- by status and due time is the one it takes. (PostgreSQL uses the partial
-- index and keeps it.)
CREATE INDEX outbox_messages_status_due ON outbox_messages(status, next_attempt_at);
DROP INDEX outbox_messages_due;

-- +goose Down
CREATE INDEX outbox_messages_due ON outbox_messages(next_attempt_at) WHERE status = 'queued';
DROP INDEX outbox_messages_status_due;
CREATE INDEX token_sessions_expires ON token_sessions(expires_at);
DROP INDEX token_sessions_kind_expires;
