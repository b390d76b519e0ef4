-- +goose Up
-- Every foreign key gets an index that starts with its column, so that
-- deleting the row it refers to finds the referring rows through it instead
-- of reading the whole referring table, holding SQLite's write lock all
-- the while. Without them, a catalog import that drops a staff member or a
-- service read every booking ever made (bookings_staff_block_end covers
-- confirmed bookings only), deleting a client read every link, and erasing
-- an account or a business read every calendar feed (their indexes covered
-- the feeds not revoked; they now cover all of them, which the feeds' own
-- look-ups read as well). TestForeignKeysIndexedSQLite holds every foreign
-- key to this.
CREATE INDEX bookings_service ON bookings(service_id);
CREATE INDEX bookings_staff ON bookings(staff_id);
CREATE INDEX links_client ON links(client_id);
CREATE INDEX staff_services_service ON staff_services(service_id);
DROP INDEX calendar_feeds_account;
CREATE INDEX calendar_feeds_account ON calendar_feeds(account_id);
DROP INDEX calendar_feeds_business;
CREATE INDEX calendar_feeds_business ON calendar_feeds(business_id, staff_id);
CREATE INDEX calendar_feeds_staff ON calendar_feeds(staff_id);

-- +goose Down
DROP INDEX calendar_feeds_staff;
DROP INDEX calendar_feeds_business;
CREATE INDEX calendar_feeds_business ON calendar_feeds(business_id, staff_id) WHERE revoked_at IS NULL;
DROP INDEX calendar_feeds_account;
CREATE INDEX calendar_feeds_account ON calendar_feeds(account_id) WHERE revoked_at IS NULL;
DROP INDEX staff_services_service;
DROP INDEX links_client;
DROP INDEX bookings_staff;
DROP INDEX bookings_service;
