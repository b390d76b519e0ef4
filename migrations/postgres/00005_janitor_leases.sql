-- +goose Up
-- One row per janitor task: the process that holds it and until when.
-- Replicas take a free or expired lease, so each task runs in one process
-- at a time and another takes over when a holder dies (internal/janitor).
CREATE TABLE janitor_leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE janitor_leases;
