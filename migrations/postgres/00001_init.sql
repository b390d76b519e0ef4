-- +goose Up
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE accounts (
    id            text PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    admin         boolean NOT NULL DEFAULT false,
    disabled      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE web_sessions (
    id_hash    text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_account ON web_sessions(account_id);

CREATE TABLE clients (
    id             text PRIMARY KEY,
    name           text NOT NULL,
    secret_hash    text NOT NULL DEFAULT '',
    public         boolean NOT NULL,
    redirect_uris  text NOT NULL,   -- JSON array
    allowed_scopes text NOT NULL,   -- JSON array
    default_scopes text NOT NULL,   -- JSON array
    grant_types    text NOT NULL,   -- JSON array
    logo_url       text NOT NULL DEFAULT '',
    contact        text NOT NULL DEFAULT '',
    disabled       boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

CREATE TABLE links (
    id           text PRIMARY KEY,
    account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    client_id    text NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    scopes       text NOT NULL,     -- JSON array
    status       text NOT NULL CHECK (status IN ('active', 'revoked')),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX links_one_active ON links(account_id, client_id) WHERE status = 'active';
CREATE INDEX links_account ON links(account_id);

CREATE TABLE token_sessions (
    kind           text NOT NULL,
    signature_hash text NOT NULL,
    request_id     text NOT NULL,
    client_id      text NOT NULL,
    account_id     text NOT NULL DEFAULT '',
    link_id        text NOT NULL DEFAULT '',
    active         boolean NOT NULL,
    request        bytea NOT NULL,
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (kind, signature_hash)
);
CREATE INDEX token_sessions_request ON token_sessions(request_id);
CREATE INDEX token_sessions_link ON token_sessions(link_id) WHERE link_id <> '';
CREATE INDEX token_sessions_expires ON token_sessions(expires_at);

CREATE TABLE signing_keys (
    id                text PRIMARY KEY,
    purpose           text NOT NULL,
    algorithm         text NOT NULL,
    private_encrypted bytea NOT NULL,
    public_jwk        bytea NOT NULL,
    created_at        timestamptz NOT NULL,
    retired_at        timestamptz
);
CREATE INDEX signing_keys_purpose ON signing_keys(purpose, created_at);

CREATE TABLE businesses (
    id                          text PRIMARY KEY,
    reference                   text NOT NULL UNIQUE,
    name                        text NOT NULL,
    description                 text NOT NULL DEFAULT '',
    category                    text NOT NULL CHECK (category IN ('appointment', 'restaurant')),
    city                        text NOT NULL DEFAULT '',
    address                     text NOT NULL DEFAULT '',
    time_zone                   text NOT NULL,
    agent_booking               boolean NOT NULL DEFAULT false,
    min_notice_minutes          integer NOT NULL DEFAULT 0,
    horizon_days                integer NOT NULL DEFAULT 60,
    slot_interval_minutes       integer NOT NULL DEFAULT 15,
    cancellation_window_minutes integer NOT NULL DEFAULT 0,
    cancellation_fee_cents      bigint NOT NULL DEFAULT 0,
    currency                    text NOT NULL DEFAULT 'USD',
    cancellation_policy         text NOT NULL DEFAULT '',
    privacy_notice              text NOT NULL DEFAULT '',
    booking_url                 text NOT NULL DEFAULT '',
    search_text                 text NOT NULL DEFAULT '',  -- name, category, city, service names
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL
);
CREATE INDEX businesses_search_trgm ON businesses USING gin (search_text gin_trgm_ops);
CREATE INDEX businesses_city ON businesses(lower(city));

CREATE TABLE business_hours (
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    weekday     smallint NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    start_min   integer NOT NULL CHECK (start_min BETWEEN 0 AND 1440),
    end_min     integer NOT NULL CHECK (end_min BETWEEN 0 AND 1440),
    CHECK (start_min < end_min)
);
CREATE INDEX business_hours_business ON business_hours(business_id);

CREATE TABLE services (
    id                    text PRIMARY KEY,
    business_id           text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    reference             text NOT NULL,
    name                  text NOT NULL,
    description           text NOT NULL DEFAULT '',
    duration_minutes      integer NOT NULL CHECK (duration_minutes > 0),
    price_cents           bigint NOT NULL DEFAULT 0,
    currency              text NOT NULL,
    buffer_before_minutes integer NOT NULL DEFAULT 0,
    buffer_after_minutes  integer NOT NULL DEFAULT 0,
    deposit_required      boolean NOT NULL DEFAULT false,
    UNIQUE (business_id, reference)
);

CREATE TABLE staff (
    id          text PRIMARY KEY,
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    reference   text NOT NULL,
    name        text NOT NULL,
    UNIQUE (business_id, reference)
);

CREATE TABLE staff_services (
    staff_id   text NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
    service_id text NOT NULL REFERENCES services(id) ON DELETE CASCADE,
    PRIMARY KEY (staff_id, service_id)
);

CREATE TABLE staff_hours (
    staff_id  text NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
    weekday   smallint NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    start_min integer NOT NULL CHECK (start_min BETWEEN 0 AND 1440),
    end_min   integer NOT NULL CHECK (end_min BETWEEN 0 AND 1440),
    CHECK (start_min < end_min)
);
CREATE INDEX staff_hours_staff ON staff_hours(staff_id);

CREATE TABLE staff_time_off (
    id        text PRIMARY KEY,
    staff_id  text NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
    starts_at timestamptz NOT NULL,
    ends_at   timestamptz NOT NULL,
    reason    text NOT NULL DEFAULT '',
    CHECK (starts_at < ends_at)
);
CREATE INDEX staff_time_off_staff ON staff_time_off(staff_id);

CREATE TABLE bookings (
    id                     text PRIMARY KEY,
    reference              text NOT NULL UNIQUE,
    business_id            text NOT NULL REFERENCES businesses(id),
    service_id             text NOT NULL REFERENCES services(id),
    staff_id               text NOT NULL REFERENCES staff(id),
    account_id             text NOT NULL DEFAULT '',
    link_id                text NOT NULL DEFAULT '',
    starts_at              timestamptz NOT NULL,
    ends_at                timestamptz NOT NULL,
    block_start            timestamptz NOT NULL,
    block_end              timestamptz NOT NULL,
    status                 text NOT NULL CHECK (status IN ('confirmed', 'cancelled', 'completed')),
    version                integer NOT NULL DEFAULT 1,
    notes                  text NOT NULL DEFAULT '',
    payment_state          text NOT NULL DEFAULT 'none' CHECK (payment_state IN ('none', 'deposit_held', 'paid')),
    price_cents            bigint NOT NULL DEFAULT 0,
    currency               text NOT NULL DEFAULT '',
    cancel_reason          text NOT NULL DEFAULT '',
    cancellation_fee_cents bigint NOT NULL DEFAULT 0,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    cancelled_at           timestamptz,
    CHECK (starts_at < ends_at AND block_start <= starts_at AND ends_at <= block_end),
    -- No two confirmed bookings of one staff member overlap, buffers included.
    CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        staff_id WITH =,
        tstzrange(block_start, block_end, '[)') WITH &&
    ) WHERE (status = 'confirmed')
);
CREATE INDEX bookings_account ON bookings(account_id, starts_at);

CREATE TABLE booking_events (
    id         text PRIMARY KEY,
    booking_id text NOT NULL REFERENCES bookings(id) ON DELETE CASCADE,
    version    integer NOT NULL,
    action     text NOT NULL,
    staff_id   text NOT NULL,
    starts_at  timestamptz NOT NULL,
    ends_at    timestamptz NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX booking_events_booking ON booking_events(booking_id, version);

CREATE TABLE idempotency_records (
    link_id    text NOT NULL,
    tool       text NOT NULL,
    key        text NOT NULL,
    args_hash  text NOT NULL,
    state      text NOT NULL CHECK (state IN ('pending', 'done')),
    response   bytea,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (link_id, tool, key)
);
CREATE INDEX idempotency_records_expires ON idempotency_records(expires_at);

CREATE TABLE activities (
    id                text PRIMARY KEY,
    account_id        text NOT NULL,
    link_id           text NOT NULL,
    client_id         text NOT NULL,
    tool              text NOT NULL,
    arguments         text NOT NULL,
    summary           text NOT NULL,
    confirmation_text text NOT NULL,
    idempotency_key   text NOT NULL,
    outcome           text NOT NULL,
    request_id        text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL
);
CREATE INDEX activities_account ON activities(account_id, created_at DESC);

CREATE TABLE audit_events (
    id         text PRIMARY KEY,
    actor_id   text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL,
    before     text NOT NULL DEFAULT '',
    after      text NOT NULL DEFAULT '',
    request_id text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX audit_events_created ON audit_events(created_at DESC);

-- +goose Down
DROP TABLE audit_events, activities, idempotency_records, booking_events, bookings,
    staff_time_off, staff_hours, staff_services, staff, services, business_hours,
    businesses, signing_keys, token_sessions, links, clients, web_sessions, accounts;
