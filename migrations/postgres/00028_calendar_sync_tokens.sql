-- +goose Up
-- Incremental CalDAV sync (docs/calendars.md "Incremental"): the RFC 6578
-- sync token the calendar server answered at the last good sync, for the
-- next sync's sync-collection REPORT. Empty: no token (an iCalendar URL,
-- a server without sync-collection, or not synced yet); setting a calendar
-- again starts without one.
ALTER TABLE staff_calendars ADD COLUMN sync_token text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE staff_calendars DROP COLUMN sync_token;
