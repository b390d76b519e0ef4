-- +goose NO TRANSACTION
-- +goose Up
-- Three reads of tables that only grow (or keep 30 days) get indexes that
-- match their whole condition and order, so they read what they return:
--
-- - outbox_messages_status_channel: the outbox gauges' count of queued and
--   failed messages by channel, every 15 s in every process, read each
--   failed message's row for its channel (one dead webhook endpoint keeps
--   a failed row per event for 30 days); the delivery log filtered by
--   status and channel (the replay queue: failed e-mails) walked every
--   message of the channel. Now an index-only count and an index walk.
-- - bookings_staff on (staff_id, starts_at) instead of (staff_id): a staff
--   member's calendar feed read every booking of the business from the
--   feed's window on, to keep that staff member's. The index still serves
--   the foreign key.
-- - audit_events_created on (created_at DESC, id DESC) instead of
--   (created_at DESC): with a page of one or two events the planner sorted
--   the whole audit log for the tie-break on id, which the index lacked.
--
-- Built CONCURRENTLY, so bookings and the outbox stay writable; hence no
-- transaction. A replaced index is built under a new name, the old one
-- dropped and the new one renamed, so the foreign key is never without
-- its index, and an interrupted run can simply be run again.
-- TestGrowingTablePlansSQLite and TestGrowingTableOrders hold the reads
-- to these.
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS outbox_messages_status_channel;
CREATE INDEX CONCURRENTLY outbox_messages_status_channel ON outbox_messages(status, channel, created_at DESC, id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff_starts;
CREATE INDEX CONCURRENTLY bookings_staff_starts ON bookings(staff_id, starts_at);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
ALTER INDEX bookings_staff_starts RENAME TO bookings_staff;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_created_id;
CREATE INDEX CONCURRENTLY audit_events_created_id ON audit_events(created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS audit_events_created;
ALTER INDEX audit_events_created_id RENAME TO audit_events_created;
RESET statement_timeout;

-- +goose Down
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_created_old;
CREATE INDEX CONCURRENTLY audit_events_created_old ON audit_events(created_at DESC);
DROP INDEX CONCURRENTLY IF EXISTS audit_events_created;
ALTER INDEX audit_events_created_old RENAME TO audit_events_created;
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff_old;
CREATE INDEX CONCURRENTLY bookings_staff_old ON bookings(staff_id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
ALTER INDEX bookings_staff_old RENAME TO bookings_staff;
DROP INDEX CONCURRENTLY IF EXISTS outbox_messages_status_channel;
RESET statement_timeout;
