-- +goose Up
-- A rotated refresh token keeps when it was rotated and its successor,
-- sealed (AES-256-GCM under a key derived from LINKSLOT_SECRET_KEY), so
-- that the same token presented again within LINKSLOT_REFRESH_GRACE, while
-- the successor is unused, is answered with that one successor
-- (docs/refresh-grace.md). Both are NULL on every other row.
ALTER TABLE token_sessions ADD COLUMN rotated_at DATETIME;
ALTER TABLE token_sessions ADD COLUMN successor BLOB;

-- +goose Down
ALTER TABLE token_sessions DROP COLUMN successor;
ALTER TABLE token_sessions DROP COLUMN rotated_at;
