-- +goose Up
-- How a confirmed mutation was made: 'agent' (through a link) or 'web' (by
-- the person on the My bookings page, with no link).
ALTER TABLE activities ADD COLUMN via text NOT NULL DEFAULT 'agent';

-- +goose Down
ALTER TABLE activities DROP COLUMN via;
