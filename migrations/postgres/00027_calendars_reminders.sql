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
    password_sealed bytea,
    collection_tag  text NOT NULL DEFAULT '',
    window_start    timestamptz,               -- the span busy times were expanded over
    window_end      timestamptz,
    synced_at       timestamptz,               -- the last good sync
    attempted_at    timestamptz,               -- the last sync, good or not
    last_error      text NOT NULL DEFAULT '',  -- what went wrong and what to fix; empty after a good sync
    objects         integer NOT NULL DEFAULT 0,
    busy            integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
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
    starts_at timestamptz NOT NULL,
    ends_at   timestamptz NOT NULL
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
    updated_at timestamptz NOT NULL
);

-- Reminders per business: minutes before the start, comma-separated;
-- empty: off. No row: the default, 24 hours and 2 hours.
CREATE TABLE business_reminders (
    business_id text PRIMARY KEY REFERENCES businesses(id) ON DELETE CASCADE,
    offsets     text NOT NULL,
    updated_at  timestamptz NOT NULL
);

-- Calendar writes go through the outbox as their own channel.
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_channel_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_channel_check CHECK (channel IN ('email', 'webhook', 'calendar'));

-- +goose Down
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_channel_check;
DELETE FROM outbox_messages WHERE channel = 'calendar';
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_channel_check CHECK (channel IN ('email', 'webhook'));
DROP TABLE business_reminders;
DROP TABLE calendar_events;
DROP TABLE calendar_busy;
DROP TABLE calendar_objects;
DROP TABLE staff_calendars;
