-- +goose Up
-- Client ID metadata documents and private_key_jwt (docs/reference.md §10).
ALTER TABLE clients ADD COLUMN pinned_document text NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN open_linked BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE clients ADD COLUMN jwks_uri text NOT NULL DEFAULT '';

-- Single use of client assertion ids (RFC 7523 jti), across replicas: the
-- primary key decides which of two concurrent uses wins.
CREATE TABLE client_assertions (
    jti_hash   text PRIMARY KEY,
    expires_at DATETIME NOT NULL
);
CREATE INDEX client_assertions_expires ON client_assertions(expires_at);

-- +goose Down
DROP TABLE client_assertions;
ALTER TABLE clients DROP COLUMN jwks_uri;
ALTER TABLE clients DROP COLUMN open_linked;
ALTER TABLE clients DROP COLUMN pinned_document;
