-- +goose NO TRANSACTION
-- +goose Up
-- Business search designed for its size (docs/design.md, "Business
-- search"). Every searchable business (agent booking on, an appointment
-- business) has one row in business_terms per distinct prefix, one to
-- twelve characters, of each word of its name, city and service names,
-- folded (lower case, accents removed, punctuation a space) in Go. A
-- query word is then one equality on the B-tree, which returns the
-- businesses already in rank order, so the ranked, limited query reads
-- the page it returns and not every match — one- and two-letter words
-- included. Names that begin with the whole query come from
-- businesses_search_name, and a city filter from the *_city indexes.
-- search_words is the vocabulary that typo suggestions are drawn from
-- (trigram distance through GiST, then a bounded edit distance in Go).
-- The old trigram index on search_text ranked every match before cutting
-- the page; it goes. Businesses written before are indexed by the store
-- once this has run (BackfillSearch).
--
-- Bookings at size (docs/design.md, "Bookings at size"): the reads of a
-- person's bookings, a business's and a staff member's calendar feeds
-- order by (starts_at, id); their indexes now end in id, so the order is
-- the index's and the read stops at the page. bookings_account_status
-- serves one state of a person's bookings (upcoming, cancelled, and any
-- state added later: no index here is partial on a list of states).
--
-- No transaction: the bookings indexes are built CONCURRENTLY, so bookings
-- stay writable, and replaced under a new name (the foreign key's index,
-- bookings_staff, is never missing); every statement can be run again.
SET statement_timeout = 0;
ALTER TABLE businesses ADD COLUMN IF NOT EXISTS search_key text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN IF NOT EXISTS search_name text COLLATE "C";
ALTER TABLE businesses ADD COLUMN IF NOT EXISTS search_city text COLLATE "C";
CREATE INDEX CONCURRENTLY IF NOT EXISTS businesses_search_name ON businesses(search_name, id) WHERE search_name IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS businesses_search_city ON businesses(search_city, search_name, id) WHERE search_name IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS businesses_search_trgm;

CREATE TABLE IF NOT EXISTS business_terms (
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    term        text COLLATE "C" NOT NULL,
    field       smallint NOT NULL,           -- 0: a word of the name; 1: of the city or a service
    city_key    text COLLATE "C" NOT NULL,
    name_key    text COLLATE "C" NOT NULL,
    PRIMARY KEY (business_id, term)
);
CREATE INDEX IF NOT EXISTS business_terms_term ON business_terms(term, field, name_key, business_id);
CREATE INDEX IF NOT EXISTS business_terms_city ON business_terms(city_key, term, field, name_key, business_id);

CREATE TABLE IF NOT EXISTS search_words (
    word text COLLATE "C" PRIMARY KEY
);
CREATE INDEX IF NOT EXISTS search_words_trgm ON search_words USING gist (word gist_trgm_ops);

DROP INDEX CONCURRENTLY IF EXISTS bookings_account_status;
CREATE INDEX CONCURRENTLY bookings_account_status ON bookings(account_id, status, starts_at, id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_account_id;
CREATE INDEX CONCURRENTLY bookings_account_id ON bookings(account_id, starts_at, id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_account;
ALTER INDEX bookings_account_id RENAME TO bookings_account;
DROP INDEX CONCURRENTLY IF EXISTS bookings_business_starts_id;
CREATE INDEX CONCURRENTLY bookings_business_starts_id ON bookings(business_id, starts_at, id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_business_starts;
ALTER INDEX bookings_business_starts_id RENAME TO bookings_business_starts;
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff_id;
CREATE INDEX CONCURRENTLY bookings_staff_id ON bookings(staff_id, starts_at, id);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
ALTER INDEX bookings_staff_id RENAME TO bookings_staff;
RESET statement_timeout;

-- +goose Down
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff_old;
CREATE INDEX CONCURRENTLY bookings_staff_old ON bookings(staff_id, starts_at);
DROP INDEX CONCURRENTLY IF EXISTS bookings_staff;
ALTER INDEX bookings_staff_old RENAME TO bookings_staff;
DROP INDEX CONCURRENTLY IF EXISTS bookings_business_starts_old;
CREATE INDEX CONCURRENTLY bookings_business_starts_old ON bookings(business_id, starts_at);
DROP INDEX CONCURRENTLY IF EXISTS bookings_business_starts;
ALTER INDEX bookings_business_starts_old RENAME TO bookings_business_starts;
DROP INDEX CONCURRENTLY IF EXISTS bookings_account_old;
CREATE INDEX CONCURRENTLY bookings_account_old ON bookings(account_id, starts_at);
DROP INDEX CONCURRENTLY IF EXISTS bookings_account;
ALTER INDEX bookings_account_old RENAME TO bookings_account;
DROP INDEX CONCURRENTLY IF EXISTS bookings_account_status;
DROP TABLE IF EXISTS search_words;
DROP TABLE IF EXISTS business_terms;
DROP INDEX CONCURRENTLY IF EXISTS businesses_search_city;
DROP INDEX CONCURRENTLY IF EXISTS businesses_search_name;
ALTER TABLE businesses DROP COLUMN IF EXISTS search_city;
ALTER TABLE businesses DROP COLUMN IF EXISTS search_name;
ALTER TABLE businesses DROP COLUMN IF EXISTS search_key;
CREATE INDEX CONCURRENTLY IF NOT EXISTS businesses_search_trgm ON businesses USING gin (search_text gin_trgm_ops);
RESET statement_timeout;
