-- +goose Up
-- Callback requests and the waitlist (docs/reference.md §16).
--
-- A callback request is a person asking a business, through their agent, to
-- call or write back. The business sees the open ones in its inbox and marks
-- each done. The person's contact details are the account's, read when the
-- request is shown: nothing the agent wrote is taken as an address.
CREATE TABLE callback_requests (
    id              text PRIMARY KEY,
    reference       text NOT NULL UNIQUE,
    business_id     text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    account_id      text NOT NULL,
    link_id         text NOT NULL DEFAULT '',
    client_id       text NOT NULL DEFAULT '',
    topic           text NOT NULL,
    preferred_times text NOT NULL DEFAULT '',
    notes           text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('open', 'done')),
    created_at      DATETIME NOT NULL,
    done_at         DATETIME,
    done_by         text NOT NULL DEFAULT ''
);
CREATE INDEX callback_requests_business ON callback_requests(business_id, status, created_at);
CREATE INDEX callback_requests_account ON callback_requests(account_id, created_at);

-- A waitlist entry: a person waiting for a service at a business, with
-- anyone or one staff member, between two local dates (inclusive) and
-- within a time of day (minutes after local midnight, [earliest, latest)).
-- position orders a business's entries first come, first served (one more
-- than the business's highest when written; ties, which only concurrent
-- joins can make, go by id).
CREATE TABLE waitlist_entries (
    id           text PRIMARY KEY,
    reference    text NOT NULL UNIQUE,
    account_id   text NOT NULL,
    link_id      text NOT NULL DEFAULT '',
    business_id  text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    service_id   text NOT NULL REFERENCES services(id) ON DELETE CASCADE,
    staff_id     text NOT NULL DEFAULT '',
    from_date    text NOT NULL,
    to_date      text NOT NULL,
    earliest_min integer NOT NULL CHECK (earliest_min BETWEEN 0 AND 1440),
    latest_min   integer NOT NULL CHECK (latest_min BETWEEN 0 AND 1440),
    status       text NOT NULL CHECK (status IN ('waiting', 'offered', 'booked', 'left', 'expired')),
    position     bigint NOT NULL DEFAULT 0,
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL,
    CHECK (from_date <= to_date AND earliest_min < latest_min)
);
CREATE INDEX waitlist_entries_business ON waitlist_entries(business_id, status, position);
CREATE INDEX waitlist_entries_account ON waitlist_entries(account_id, status);
CREATE INDEX waitlist_entries_service ON waitlist_entries(service_id);

-- An offer: a freed slot held for one waiting person until held_until.
-- No two held offers of one staff member overlap (SQLite: checked in the
-- write-locked transaction that writes them); a confirmed booking of anyone
-- else cannot be written over a live one.
CREATE TABLE waitlist_offers (
    id          text PRIMARY KEY,
    reference   text NOT NULL UNIQUE,
    entry_id    text NOT NULL REFERENCES waitlist_entries(id) ON DELETE CASCADE,
    account_id  text NOT NULL,
    link_id     text NOT NULL DEFAULT '',
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    service_id  text NOT NULL,
    staff_id    text NOT NULL,
    starts_at   DATETIME NOT NULL,
    ends_at     DATETIME NOT NULL,
    block_start DATETIME NOT NULL,
    block_end   DATETIME NOT NULL,
    held_until  DATETIME NOT NULL,
    status      text NOT NULL CHECK (status IN ('held', 'used', 'lapsed')),
    booking_id  text NOT NULL DEFAULT '',
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX waitlist_offers_held ON waitlist_offers(status, held_until);
CREATE INDEX waitlist_offers_entry ON waitlist_offers(entry_id);
CREATE INDEX waitlist_offers_business ON waitlist_offers(business_id);

-- +goose Down
DROP TABLE waitlist_offers;
DROP TABLE waitlist_entries;
DROP TABLE callback_requests;
