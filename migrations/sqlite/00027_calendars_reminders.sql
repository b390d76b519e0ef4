-- +goose Up
-- The business's own calendar and reminders (docs/calendars.md).
--
-- staff_calendars: one connected calendar per staff member, CalDAV (read
-- and written) or an iCalendar URL (read only). The CalDAV password is
-- sealed with LINKSLOT_SECRET_KEY (AES-GCM, bound to the staff id). The
-- last sync's time, outcome and the collection's tag (its ETag, the ctag
-- when the server keeps one) are kept beside it.
CREATE TABLE staff_calendars (
    staff_id        text PRIMARY KEY REFERENCES staff(id) ON DELETE CASCADE,
    business_id     text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('caldav', 'ics')),
    url             text NOT NULL,
    username        text NOT NULL DEFAULT '',
    password_sealed BLOB,
    collection_tag  text NOT NULL DEFAULT '',
    window_start    DATETIME,               -- the span busy times were expanded over
    window_end      DATETIME,
    synced_at       DATETIME,               -- the last good sync
    attempted_at    DATETIME,               -- the last sync, good or not
    last_error      text NOT NULL DEFAULT '',  -- what went wrong and what to fix; empty after a good sync
    objects         integer NOT NULL DEFAULT 0,
    busy            integer NOT NULL DEFAULT 0,
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE INDEX staff_calendars_business ON staff_calendars(business_id);

-- The calendar's objects as last read: their ETag (what an incremental
-- sync compares) and their text (re-expanded when the window moves,
-- without fetching again).
CREATE TABLE calendar_objects (
    staff_id text NOT NULL REFERENCES staff_calendars(staff_id) ON DELETE CASCADE,
    href     text NOT NULL,
    etag     text NOT NULL DEFAULT '',
    data     text NOT NULL,
    PRIMARY KEY (staff_id, href)
);

-- Busy times of a staff member's calendar, expanded; what availability
-- reads (never the calendar itself).
CREATE TABLE calendar_busy (
    staff_id  text NOT NULL REFERENCES staff_calendars(staff_id) ON DELETE CASCADE,
    href      text NOT NULL,
    starts_at DATETIME NOT NULL,
    ends_at   DATETIME NOT NULL
);
CREATE INDEX calendar_busy_staff_starts ON calendar_busy(staff_id, starts_at);
CREATE INDEX calendar_busy_object ON calendar_busy(staff_id, href);

-- The events Linkslot wrote into CalDAV calendars: one per booking, with
-- the ETag the server answered and the booking version it holds, so a
-- retried write is conditional (If-Match / If-None-Match) and never twice.
CREATE TABLE calendar_events (
    booking_id text PRIMARY KEY REFERENCES bookings(id) ON DELETE CASCADE,
    staff_id   text NOT NULL,
    href       text NOT NULL,
    etag       text NOT NULL DEFAULT '',
    version    integer NOT NULL,
    removed    boolean NOT NULL DEFAULT false,
    updated_at DATETIME NOT NULL
);

-- Reminders per business: minutes before the start, comma-separated;
-- empty: off. No row: the default, 24 hours and 2 hours.
CREATE TABLE business_reminders (
    business_id text PRIMARY KEY REFERENCES businesses(id) ON DELETE CASCADE,
    offsets     text NOT NULL,
    updated_at  DATETIME NOT NULL
);

-- Calendar writes go through the outbox as their own channel. SQLite
-- cannot change a CHECK constraint, so the table is rebuilt, and
-- delivery_attempts with it (its foreign key would otherwise follow the old
-- table, or cascade its rows away when the old table is dropped).
CREATE TABLE outbox_messages_new (
    id              text PRIMARY KEY,
    channel         text NOT NULL CHECK (channel IN ('email', 'webhook', 'calendar')),
    topic           text NOT NULL,
    recipient       text NOT NULL DEFAULT '',
    endpoint_id     text REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    business_id     text NOT NULL DEFAULT '',
    booking_id      text NOT NULL DEFAULT '',
    payload         BLOB NOT NULL,
    status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at DATETIME NOT NULL,
    lease_owner     text NOT NULL DEFAULT '',
    lease_until     DATETIME,
    last_error      text NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL,
    delivered_at    DATETIME
);
INSERT INTO outbox_messages_new SELECT id, channel, topic, recipient, endpoint_id, business_id, booking_id, payload,
    status, attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at, delivered_at
FROM outbox_messages;
CREATE TABLE delivery_attempts_new (
    message_id  text NOT NULL REFERENCES outbox_messages_new(id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    owner       text NOT NULL DEFAULT '',
    ok          BOOLEAN NOT NULL,
    status_code integer NOT NULL DEFAULT 0,
    error       text NOT NULL DEFAULT '',
    duration_ms integer NOT NULL DEFAULT 0,
    at          DATETIME NOT NULL,
    PRIMARY KEY (message_id, attempt)
);
INSERT INTO delivery_attempts_new SELECT message_id, attempt, owner, ok, status_code, error, duration_ms, at FROM delivery_attempts;
DROP TABLE delivery_attempts;
DROP TABLE outbox_messages;
ALTER TABLE outbox_messages_new RENAME TO outbox_messages;
ALTER TABLE delivery_attempts_new RENAME TO delivery_attempts;
CREATE INDEX outbox_messages_endpoint ON outbox_messages(endpoint_id, created_at DESC) WHERE endpoint_id IS NOT NULL;
CREATE INDEX outbox_messages_status ON outbox_messages(status, created_at DESC);
CREATE INDEX outbox_messages_status_due ON outbox_messages(status, next_attempt_at);
CREATE INDEX outbox_messages_created ON outbox_messages(created_at DESC, id);
CREATE INDEX outbox_messages_channel_created ON outbox_messages(channel, created_at DESC, id);
CREATE INDEX outbox_messages_status_channel ON outbox_messages(status, channel, created_at DESC, id);

-- +goose Down
DELETE FROM outbox_messages WHERE channel = 'calendar';
CREATE TABLE outbox_messages_new (
    id              text PRIMARY KEY,
    channel         text NOT NULL CHECK (channel IN ('email', 'webhook')),
    topic           text NOT NULL,
    recipient       text NOT NULL DEFAULT '',
    endpoint_id     text REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    business_id     text NOT NULL DEFAULT '',
    booking_id      text NOT NULL DEFAULT '',
    payload         BLOB NOT NULL,
    status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at DATETIME NOT NULL,
    lease_owner     text NOT NULL DEFAULT '',
    lease_until     DATETIME,
    last_error      text NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL,
    delivered_at    DATETIME
);
INSERT INTO outbox_messages_new SELECT id, channel, topic, recipient, endpoint_id, business_id, booking_id, payload,
    status, attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at, delivered_at
FROM outbox_messages;
CREATE TABLE delivery_attempts_new (
    message_id  text NOT NULL REFERENCES outbox_messages_new(id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    owner       text NOT NULL DEFAULT '',
    ok          BOOLEAN NOT NULL,
    status_code integer NOT NULL DEFAULT 0,
    error       text NOT NULL DEFAULT '',
    duration_ms integer NOT NULL DEFAULT 0,
    at          DATETIME NOT NULL,
    PRIMARY KEY (message_id, attempt)
);
INSERT INTO delivery_attempts_new SELECT message_id, attempt, owner, ok, status_code, error, duration_ms, at FROM delivery_attempts;
DROP TABLE delivery_attempts;
DROP TABLE outbox_messages;
ALTER TABLE outbox_messages_new RENAME TO outbox_messages;
ALTER TABLE delivery_attempts_new RENAME TO delivery_attempts;
CREATE INDEX outbox_messages_endpoint ON outbox_messages(endpoint_id, created_at DESC) WHERE endpoint_id IS NOT NULL;
CREATE INDEX outbox_messages_status ON outbox_messages(status, created_at DESC);
CREATE INDEX outbox_messages_status_due ON outbox_messages(status, next_attempt_at);
CREATE INDEX outbox_messages_created ON outbox_messages(created_at DESC, id);
CREATE INDEX outbox_messages_channel_created ON outbox_messages(channel, created_at DESC, id);
CREATE INDEX outbox_messages_status_channel ON outbox_messages(status, channel, created_at DESC, id);
DROP TABLE business_reminders;
DROP TABLE calendar_events;
DROP TABLE calendar_busy;
DROP TABLE calendar_objects;
DROP TABLE staff_calendars;
