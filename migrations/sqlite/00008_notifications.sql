-- +goose Up
-- Notifications (docs/reference.md §11): the transactional outbox, webhook endpoints,
-- the log of delivery attempts, calendar feeds, and each business's contact
-- address. Additive only: every existing row stays valid as it is.

ALTER TABLE businesses ADD COLUMN contact_email text NOT NULL DEFAULT '';

CREATE TABLE webhook_endpoints (
    id               text PRIMARY KEY,
    business_id      text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    url              text NOT NULL,
    events           text NOT NULL,            -- comma-separated event types
    secret_encrypted BLOB NOT NULL,           -- AES-GCM under LINKSLOT_SECRET_KEY
    enabled          BOOLEAN NOT NULL DEFAULT true,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL
);
CREATE INDEX webhook_endpoints_business ON webhook_endpoints(business_id);

-- One row per message to deliver: an e-mail to one address, or one event to
-- one webhook endpoint. The id is the webhook-id of a webhook event, the
-- same on every attempt.
CREATE TABLE outbox_messages (
    id              text PRIMARY KEY,
    channel         text NOT NULL CHECK (channel IN ('email', 'webhook')),
    topic           text NOT NULL,             -- booking.created, link.connected, account.verify, …
    recipient       text NOT NULL DEFAULT '',  -- e-mail address (e-mail)
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
CREATE INDEX outbox_messages_due ON outbox_messages(next_attempt_at) WHERE status = 'queued';
CREATE INDEX outbox_messages_endpoint ON outbox_messages(endpoint_id, created_at DESC) WHERE endpoint_id IS NOT NULL;
CREATE INDEX outbox_messages_status ON outbox_messages(status, created_at DESC);

-- Every attempt to deliver a message, for the delivery log.
CREATE TABLE delivery_attempts (
    message_id  text NOT NULL REFERENCES outbox_messages(id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    owner       text NOT NULL DEFAULT '',      -- the process that made it
    ok          BOOLEAN NOT NULL,
    status_code integer NOT NULL DEFAULT 0,    -- webhook: the HTTP status
    error       text NOT NULL DEFAULT '',
    duration_ms integer NOT NULL DEFAULT 0,
    at          DATETIME NOT NULL,
    PRIMARY KEY (message_id, attempt)
);

-- Private calendar feeds: of a person's bookings, or of a business's or a
-- staff member's. The secret URL is derived from the id with
-- LINKSLOT_SECRET_KEY, so nothing secret is stored.
CREATE TABLE calendar_feeds (
    id          text PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('account', 'business', 'staff')),
    account_id  text REFERENCES accounts(id) ON DELETE CASCADE,
    business_id text REFERENCES businesses(id) ON DELETE CASCADE,
    staff_id    text REFERENCES staff(id) ON DELETE CASCADE,
    created_at  DATETIME NOT NULL,
    revoked_at  DATETIME
);
CREATE INDEX calendar_feeds_account ON calendar_feeds(account_id) WHERE revoked_at IS NULL;
CREATE INDEX calendar_feeds_business ON calendar_feeds(business_id, staff_id) WHERE revoked_at IS NULL;
CREATE INDEX bookings_business_starts ON bookings(business_id, starts_at);

-- +goose Down
DROP INDEX bookings_business_starts;
DROP TABLE calendar_feeds;
DROP TABLE delivery_attempts;
DROP TABLE outbox_messages;
DROP TABLE webhook_endpoints;
ALTER TABLE businesses DROP COLUMN contact_email;
