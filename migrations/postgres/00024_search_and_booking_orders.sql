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
-- the page; it goes.
ALTER TABLE businesses ADD COLUMN search_key text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN search_name text COLLATE "C";
ALTER TABLE businesses ADD COLUMN search_city text COLLATE "C";
CREATE INDEX businesses_search_name ON businesses(search_name, id) WHERE search_name IS NOT NULL;
CREATE INDEX businesses_search_city ON businesses(search_city, search_name, id) WHERE search_name IS NOT NULL;
DROP INDEX IF EXISTS businesses_search_trgm;

CREATE TABLE business_terms (
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    term        text COLLATE "C" NOT NULL,
    field       smallint NOT NULL,           -- 0: a word of the name; 1: of the city or a service
    city_key    text COLLATE "C" NOT NULL,
    name_key    text COLLATE "C" NOT NULL,
    PRIMARY KEY (business_id, term)
);
CREATE INDEX business_terms_term ON business_terms(term, field, name_key, business_id);
CREATE INDEX business_terms_city ON business_terms(city_key, term, field, name_key, business_id);

CREATE TABLE search_words (
    word text COLLATE "C" PRIMARY KEY
);
CREATE INDEX search_words_trgm ON search_words USING gist (word gist_trgm_ops);

-- A person's bookings (search_my_bookings, My bookings) by state and time
-- whatever the set of states, with the id that breaks ties in the order:
-- upcoming, cancelled, pending read one state's range in order instead of
-- every booking of the person.
CREATE INDEX bookings_account_status ON bookings(account_id, status, starts_at, id);

-- +goose Down
DROP INDEX IF EXISTS bookings_account_status;
DROP TABLE search_words;
DROP TABLE business_terms;
DROP INDEX IF EXISTS businesses_search_city;
DROP INDEX IF EXISTS businesses_search_name;
ALTER TABLE businesses DROP COLUMN search_city;
ALTER TABLE businesses DROP COLUMN search_name;
ALTER TABLE businesses DROP COLUMN search_key;
CREATE INDEX businesses_search_trgm ON businesses USING gin (search_text gin_trgm_ops);
