-- +goose Up
-- One row per janitor task (see the PostgreSQL migration of the same number).
CREATE TABLE janitor_leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE janitor_leases;
