-- +goose Up
-- The client address (internal/clientaddr) of the request that made an
-- administrative change; empty for the command line.
ALTER TABLE audit_events ADD COLUMN client_addr text NOT NULL DEFAULT '';

-- Hits per key and whole second: the rate limits and the sign-in throttle
-- shared by every replica (internal/store/sqlstore/ratewindows.go). One
-- UPSERT per counted request. UNLOGGED: no WAL is written for it, so a
-- counted request costs no fsync; after a database crash the table is
-- empty, which forgets at most one window of counts.
CREATE UNLOGGED TABLE rate_windows (
    key     text    NOT NULL,
    sec     bigint  NOT NULL,
    hits    integer NOT NULL,
    expires bigint  NOT NULL,
    PRIMARY KEY (key, sec)
);

-- +goose Down
DROP TABLE rate_windows;
ALTER TABLE audit_events DROP COLUMN client_addr;
