-- +goose Up
-- Business search designed for its size: the same tables and indexes as
-- on PostgreSQL (see migrations/postgres/00024 and docs/design.md,
-- "Business search"); the suggestions' vocabulary is read by first letter
-- and length instead of through a trigram index.
ALTER TABLE businesses ADD COLUMN search_key text NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN search_name text;
ALTER TABLE businesses ADD COLUMN search_city text;
CREATE INDEX businesses_search_name ON businesses(search_name, id) WHERE search_name IS NOT NULL;
CREATE INDEX businesses_search_city ON businesses(search_city, search_name, id) WHERE search_name IS NOT NULL;

CREATE TABLE business_terms (
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    term        text NOT NULL,
    field       integer NOT NULL,
    city_key    text NOT NULL,
    name_key    text NOT NULL,
    PRIMARY KEY (business_id, term)
) WITHOUT ROWID;
CREATE INDEX business_terms_term ON business_terms(term, field, name_key, business_id);
CREATE INDEX business_terms_city ON business_terms(city_key, term, field, name_key, business_id);

CREATE TABLE search_words (
    word text PRIMARY KEY
) WITHOUT ROWID;

-- Bookings at size: the same indexes as on PostgreSQL, ending in id so
-- that the order (starts_at, id) is the index's.
CREATE INDEX bookings_account_status ON bookings(account_id, status, starts_at, id);
DROP INDEX bookings_account;
CREATE INDEX bookings_account ON bookings(account_id, starts_at, id);
DROP INDEX bookings_business_starts;
CREATE INDEX bookings_business_starts ON bookings(business_id, starts_at, id);
DROP INDEX bookings_staff;
CREATE INDEX bookings_staff ON bookings(staff_id, starts_at, id);

-- +goose Down
DROP INDEX bookings_staff;
CREATE INDEX bookings_staff ON bookings(staff_id, starts_at);
DROP INDEX bookings_business_starts;
CREATE INDEX bookings_business_starts ON bookings(business_id, starts_at);
DROP INDEX bookings_account;
CREATE INDEX bookings_account ON bookings(account_id, starts_at);
DROP INDEX bookings_account_status;
DROP TABLE search_words;
DROP TABLE business_terms;
DROP INDEX businesses_search_city;
DROP INDEX businesses_search_name;
ALTER TABLE businesses DROP COLUMN search_city;
ALTER TABLE businesses DROP COLUMN search_name;
ALTER TABLE businesses DROP COLUMN search_key;
