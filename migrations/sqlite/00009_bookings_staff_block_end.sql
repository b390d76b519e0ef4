-- +goose Up
-- The bookings of some staff members in a window (an availability answer,
-- the slot check of a create or a reschedule) are found by where they end:
-- the bookings that end after the window starts are the window's and the
-- later ones, which the booking horizon bounds. The index by start it
-- replaces found them by "starts before the window ends", which is every
-- booking the staff members ever had, a set that only grows
-- (TestStaffBookingsAtScaleSQLite). PostgreSQL finds them through the
-- no-overlap constraint's GiST index and needs no change.
CREATE INDEX bookings_staff_block_end ON bookings(staff_id, block_end) WHERE status = 'confirmed';
DROP INDEX bookings_staff_block;

-- +goose Down
CREATE INDEX bookings_staff_block ON bookings(staff_id, block_start) WHERE status = 'confirmed';
DROP INDEX bookings_staff_block_end;
