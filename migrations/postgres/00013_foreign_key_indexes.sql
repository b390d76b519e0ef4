-- +goose NO TRANSACTION
-- +goose Up
-- Every foreign key gets an index that starts with its column, so that
-- deleting the row it refers to finds the referring rows through it instead
-- of reading the whole referring table. Without them, a catalog import that
-- drops a staff member or a service read every booking ever made (the
-- foreign-key check of bookings.staff_id and bookings.service_id: the
-- no-overlap constraint's index covers confirmed bookings only), deleting
-- a client read every link, and erasing an account or a business read
-- every calendar feed (their indexes covered the feeds not revoked; they
-- now cover all of them, which the feeds' own look-ups read as well).
-- TestForeignKeysIndexed holds every foreign key to this.
--
-- Built CONCURRENTLY, so bookings and links stay writable while the
-- indexes build (bookings is the one table that grows without bound);
-- hence no transaction. A build that fails leaves an invalid index behind,
-- so each is dropped first and the migration can simply be run again.
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS bookings_service;
CREATE INDEX CONCURRENTLY bookings_service ON bookings(service_id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
CREATE INDEX CONCURRENTLY bookings_staff ON bookings(staff_id);
DROP INDEX CONCURRENTLY IF EXISTS links_client;
CREATE INDEX CONCURRENTLY links_client ON links(client_id);
DROP INDEX CONCURRENTLY IF EXISTS staff_services_service;
CREATE INDEX CONCURRENTLY staff_services_service ON staff_services(service_id);
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_account;
CREATE INDEX CONCURRENTLY calendar_feeds_account ON calendar_feeds(account_id);
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_business;
CREATE INDEX CONCURRENTLY calendar_feeds_business ON calendar_feeds(business_id, staff_id);
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_staff;
CREATE INDEX CONCURRENTLY calendar_feeds_staff ON calendar_feeds(staff_id);
RESET statement_timeout;

-- +goose Down
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_staff;
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_business;
CREATE INDEX CONCURRENTLY calendar_feeds_business ON calendar_feeds(business_id, staff_id) WHERE revoked_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS calendar_feeds_account;
CREATE INDEX CONCURRENTLY calendar_feeds_account ON calendar_feeds(account_id) WHERE revoked_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS staff_services_service;
DROP INDEX CONCURRENTLY IF EXISTS links_client;
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
DROP INDEX CONCURRENTLY IF EXISTS bookings_service;
RESET statement_timeout;
