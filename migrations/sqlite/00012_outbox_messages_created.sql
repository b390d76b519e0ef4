-- +goose Up
-- The delivery log's pages list notifications newest first (ListMessages:
-- ORDER BY created_at DESC, id LIMIT n). With a status or an endpoint they
-- have an index; with none, or with a channel only, each page read and
-- sorted the whole 30 days the retention keeps. One index serves the
-- unfiltered pages and one the pages of a channel, which through the first
-- would walk every message of the other channels when theirs is rare
-- (TestOutboxGaugeAtScale, TestGrowingTablePlansSQLite).
CREATE INDEX outbox_messages_created ON outbox_messages(created_at DESC, id);
CREATE INDEX outbox_messages_channel_created ON outbox_messages(channel, created_at DESC, id);

-- +goose Down
DROP INDEX outbox_messages_channel_created;
DROP INDEX outbox_messages_created;
