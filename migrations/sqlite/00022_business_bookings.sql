-- +goose Up
-- Bookings the business answers (docs/reference.md "Bookings the business
-- answers"): the statuses pending, declined and no_show beside confirmed,
-- cancelled and completed; respond_by is when an unanswered pending booking
-- is declined. A pending booking holds its slot: the store's serialized
-- check-and-insert counts pending and confirmed bookings, and the partial
-- index it reads covers both. SQLite cannot change a CHECK constraint in
-- place, so bookings is rebuilt with its rows; booking_events, the one
-- table that refers to it, is copied aside and back so that dropping the
-- old table (with foreign keys on) cascades into nothing. Every index of
-- both tables (migrations 00001, 00008, 00009, 00013, 00015) is recreated.
-- A service may require the business's confirmation, within the business's
-- confirmation window (0: the default, 24 hours). Activity names who acted
-- for a business (actor). Self-reported credentials of a business live in
-- business_credentials and go with their business.
CREATE TABLE bookings_copy AS SELECT * FROM bookings;
CREATE TABLE booking_events_copy AS SELECT * FROM booking_events;
DROP TABLE booking_events;
DROP TABLE bookings;
CREATE TABLE bookings (
    id                     text PRIMARY KEY,
    reference              text NOT NULL UNIQUE,
    business_id            text NOT NULL REFERENCES businesses(id),
    service_id             text NOT NULL REFERENCES services(id),
    staff_id               text NOT NULL REFERENCES staff(id),
    account_id             text NOT NULL DEFAULT '',
    link_id                text NOT NULL DEFAULT '',
    starts_at              DATETIME NOT NULL,
    ends_at                DATETIME NOT NULL,
    block_start            DATETIME NOT NULL,
    block_end              DATETIME NOT NULL,
    status                 text NOT NULL CHECK (status IN ('pending', 'confirmed', 'declined', 'cancelled', 'completed', 'no_show')),
    version                integer NOT NULL DEFAULT 1,
    notes                  text NOT NULL DEFAULT '',
    payment_state          text NOT NULL DEFAULT 'none' CHECK (payment_state IN ('none', 'deposit_held', 'paid')),
    price_cents            INTEGER NOT NULL DEFAULT 0,
    currency               text NOT NULL DEFAULT '',
    cancel_reason          text NOT NULL DEFAULT '',
    cancellation_fee_cents INTEGER NOT NULL DEFAULT 0,
    created_at             DATETIME NOT NULL,
    updated_at             DATETIME NOT NULL,
    cancelled_at           DATETIME,
    respond_by             DATETIME,
    CHECK (starts_at < ends_at AND block_start <= starts_at AND ends_at <= block_end)
    -- No-overlap of pending and confirmed bookings is enforced by the
    -- store's serialized check-and-insert (SQLite has no exclusion
    -- constraints).
);
INSERT INTO bookings (id, reference, business_id, service_id, staff_id, account_id, link_id, starts_at, ends_at,
    block_start, block_end, status, version, notes, payment_state, price_cents, currency, cancel_reason,
    cancellation_fee_cents, created_at, updated_at, cancelled_at)
SELECT id, reference, business_id, service_id, staff_id, account_id, link_id, starts_at, ends_at,
    block_start, block_end, status, version, notes, payment_state, price_cents, currency, cancel_reason,
    cancellation_fee_cents, created_at, updated_at, cancelled_at FROM bookings_copy;
DROP TABLE bookings_copy;
CREATE INDEX bookings_account ON bookings(account_id, starts_at);
CREATE INDEX bookings_business_starts ON bookings(business_id, starts_at);
CREATE INDEX bookings_staff_block_end ON bookings(staff_id, block_end) WHERE status IN ('pending', 'confirmed');
CREATE INDEX bookings_service ON bookings(service_id);
CREATE INDEX bookings_staff ON bookings(staff_id, starts_at);
CREATE INDEX bookings_pending_respond_by ON bookings(respond_by) WHERE status = 'pending';
CREATE TABLE booking_events (
    id         text PRIMARY KEY,
    booking_id text NOT NULL REFERENCES bookings(id) ON DELETE CASCADE,
    version    integer NOT NULL,
    action     text NOT NULL,
    staff_id   text NOT NULL,
    starts_at  DATETIME NOT NULL,
    ends_at    DATETIME NOT NULL,
    at         DATETIME NOT NULL
);
INSERT INTO booking_events (id, booking_id, version, action, staff_id, starts_at, ends_at, at)
SELECT id, booking_id, version, action, staff_id, starts_at, ends_at, at FROM booking_events_copy;
DROP TABLE booking_events_copy;
CREATE INDEX booking_events_booking ON booking_events(booking_id, version);

ALTER TABLE services ADD COLUMN requires_confirmation boolean NOT NULL DEFAULT false;
ALTER TABLE businesses ADD COLUMN confirmation_window_minutes integer NOT NULL DEFAULT 0
    CHECK (confirmation_window_minutes >= 0);
ALTER TABLE activities ADD COLUMN actor text NOT NULL DEFAULT '';

CREATE TABLE business_credentials (
    id          text PRIMARY KEY,
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    position    integer NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('license', 'insurance', 'certification')),
    name        text NOT NULL,
    issuer      text NOT NULL DEFAULT '',
    number      text NOT NULL DEFAULT '',
    valid_until text,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX business_credentials_business ON business_credentials(business_id, position);

-- +goose Down
DROP TABLE business_credentials;
ALTER TABLE activities DROP COLUMN actor;
ALTER TABLE businesses DROP COLUMN confirmation_window_minutes;
ALTER TABLE services DROP COLUMN requires_confirmation;
DROP INDEX bookings_pending_respond_by;
DROP INDEX bookings_staff_block_end;
ALTER TABLE bookings DROP COLUMN respond_by;
UPDATE bookings SET status = 'cancelled' WHERE status IN ('pending', 'declined');
UPDATE bookings SET status = 'completed' WHERE status = 'no_show';
CREATE INDEX bookings_staff_block_end ON bookings(staff_id, block_end) WHERE status = 'confirmed';
-- The wider CHECK on status stays: every status the older code writes
-- passes it.
