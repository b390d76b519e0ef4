-- +goose Up
-- Three reads of tables that only grow (or keep 30 days) get indexes that
-- match their whole condition and order, so they read what they return:
--
-- - outbox_messages_status_channel: the outbox gauges' count of queued and
--   failed messages by channel, every 15 s in every process, read each
--   failed message's row for its channel (one dead webhook endpoint keeps
--   a failed row per event for 30 days); the delivery log filtered by
--   status and channel (the replay queue: failed e-mails) walked every
--   message of the channel. Now a count from the index alone and an index
--   walk.
-- - bookings_staff on (staff_id, starts_at) instead of (staff_id): a staff
--   member's calendar feed read every booking of the business from the
--   feed's window on, to keep that staff member's. The index still serves
--   the foreign key.
-- - audit_events_created on (created_at DESC, id DESC) instead of
--   (created_at DESC): with a page of one or two events SQLite sorted the
--   whole audit log for the tie-break on id, which the index lacked.
--
-- TestGrowingTablePlansSQLite and TestGrowingTableOrders hold the reads to
-- these.
CREATE INDEX outbox_messages_status_channel ON outbox_messages(status, channel, created_at DESC, id);
DROP INDEX bookings_staff;
CREATE INDEX bookings_staff ON bookings(staff_id, starts_at);
DROP INDEX audit_events_created;
CREATE INDEX audit_events_created ON audit_events(created_at DESC, id DESC);

-- +goose Down
DROP INDEX audit_events_created;
CREATE INDEX audit_events_created ON audit_events(created_at DESC);
DROP INDEX bookings_staff;
CREATE INDEX bookings_staff ON bookings(staff_id);
DROP INDEX outbox_messages_status_channel;
