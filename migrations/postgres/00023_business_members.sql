-- +goose Up
-- The people of a business (docs/reference.md §16): an account is a member
-- of a business as its owner or as one of its staff (tied to the staff
-- record whose calendar it sees). A membership goes with its account, its
-- business or its staff record.
CREATE TABLE business_members (
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('owner', 'staff')),
    staff_id    text REFERENCES staff(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (business_id, account_id),
    CHECK ((role = 'staff' AND staff_id IS NOT NULL) OR (role = 'owner' AND staff_id IS NULL))
);
CREATE INDEX business_members_account ON business_members(account_id);
CREATE INDEX business_members_staff ON business_members(staff_id);

-- An owner's invitation of a staff member: only the SHA-256 of the
-- e-mailed token is kept; it works once, before expires_at, for whoever
-- accepts it while signed in.
CREATE TABLE member_invitations (
    token_hash  text PRIMARY KEY,
    business_id text NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
    staff_id    text NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
    email       text NOT NULL,
    invited_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX member_invitations_business ON member_invitations(business_id);
CREATE INDEX member_invitations_staff ON member_invitations(staff_id);
CREATE INDEX member_invitations_expires ON member_invitations(expires_at);

-- +goose Down
DROP TABLE member_invitations;
DROP TABLE business_members;
