-- +goose Up
-- Verified e-mail, erased accounts, single-use e-mail links, passkeys.
ALTER TABLE accounts ADD COLUMN email_verified_at DATETIME;
ALTER TABLE accounts ADD COLUMN deleted_at DATETIME;
-- Administrators were created by an operator: their address counts as
-- verified. Everyone else confirms theirs the next time they approve an app.
UPDATE accounts SET email_verified_at = created_at WHERE admin;

CREATE TABLE account_tokens (
    token_hash text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    purpose    text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
    email      text NOT NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME
);
CREATE INDEX account_tokens_account ON account_tokens(account_id, purpose);
CREATE INDEX account_tokens_expires ON account_tokens(expires_at);

CREATE TABLE passkeys (
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    credential_id BLOB NOT NULL UNIQUE,
    name          text NOT NULL,
    credential    BLOB NOT NULL,   -- JSON of the WebAuthn credential (public key, flags, counter)
    created_at    DATETIME NOT NULL,
    last_used_at  DATETIME
);
CREATE INDEX passkeys_account ON passkeys(account_id);

CREATE TABLE webauthn_ceremonies (
    id_hash    text PRIMARY KEY,
    account_id text NOT NULL DEFAULT '',
    purpose    text NOT NULL CHECK (purpose IN ('register', 'login', 'reauth')),
    data       BLOB NOT NULL,      -- JSON of the ceremony's session data (challenge)
    expires_at DATETIME NOT NULL
);
CREATE INDEX webauthn_ceremonies_expires ON webauthn_ceremonies(expires_at);

-- +goose Down
DROP TABLE webauthn_ceremonies;
DROP TABLE passkeys;
DROP TABLE account_tokens;
ALTER TABLE accounts DROP COLUMN deleted_at;
ALTER TABLE accounts DROP COLUMN email_verified_at;
