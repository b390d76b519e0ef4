-- +goose Up
-- Bookings the business answers (docs/reference.md "Bookings the business
-- answers"): the statuses pending, declined and no_show beside confirmed,
-- cancelled and completed; a pending booking holds its slot, so the
-- no-overlap constraint counts pending and confirmed bookings; respond_by is
-- when an unanswered pending booking is declined (the index finds the due
-- ones). A service may require the business's confirmation, within the
-- business's confirmation window (0: the default, 24 hours). Activity names
-- who acted for a business (actor). Self-reported credentials of a business
-- (licenses, insurance, certifications) live in business_credentials and go
-- with their business.
ALTER TABLE bookings DROP CONSTRAINT bookings_status_check;
ALTER TABLE bookings ADD CONSTRAINT bookings_status_check
    CHECK (status IN ('pending', 'confirmed', 'declined', 'cancelled', 'completed', 'no_show'));
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
    staff_id WITH =,
    tstzrange(block_start, block_end, '[)') WITH &&
) WHERE (status IN ('pending', 'confirmed'));
ALTER TABLE bookings ADD COLUMN respond_by timestamptz;
CREATE INDEX bookings_pending_respond_by ON bookings(respond_by) WHERE status = 'pending';

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
    valid_until text, -- YYYY-MM-DD
    updated_at  timestamptz NOT NULL
);
CREATE INDEX business_credentials_business ON business_credentials(business_id, position);

-- +goose Down
DROP TABLE business_credentials;
ALTER TABLE activities DROP COLUMN actor;
ALTER TABLE businesses DROP COLUMN confirmation_window_minutes;
ALTER TABLE services DROP COLUMN requires_confirmation;
DROP INDEX bookings_pending_respond_by;
ALTER TABLE bookings DROP COLUMN respond_by;
UPDATE bookings SET status = 'cancelled' WHERE status IN ('pending', 'declined');
UPDATE bookings SET status = 'completed' WHERE status = 'no_show';
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
    staff_id WITH =,
    tstzrange(block_start, block_end, '[)') WITH &&
) WHERE (status = 'confirmed');
ALTER TABLE bookings DROP CONSTRAINT bookings_status_check;
ALTER TABLE bookings ADD CONSTRAINT bookings_status_check CHECK (status IN ('confirmed', 'cancelled', 'completed'));
