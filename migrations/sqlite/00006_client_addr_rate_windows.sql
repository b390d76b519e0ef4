-- +goose Up
-- The client address (internal/clientaddr) of the request that made an
-- administrative change; empty for the command line.
ALTER TABLE audit_events ADD COLUMN client_addr text NOT NULL DEFAULT '';

-- Hits per key and whole second (see the PostgreSQL migration). A
-- single-node SQLite deployment keeps its limits in process; the table
-- exists so that both dialects have one schema and one conformance suite.
CREATE TABLE rate_windows (
    key     text    NOT NULL,
    sec     integer NOT NULL,
    hits    integer NOT NULL,
    expires integer NOT NULL,
    PRIMARY KEY (key, sec)
);

-- +goose Down
DROP TABLE rate_windows;
ALTER TABLE audit_events DROP COLUMN client_addr;
