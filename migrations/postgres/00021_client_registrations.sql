-- +goose Up
-- Dynamic client registration (RFC 7591, RFC 7592; docs/reference.md §14):
-- beside each client registered that way, the SHA-256 of its registration
-- access token and the metadata it was accepted with (JSON, as answered).
-- The row goes with its client. The janitor deletes clients registered
-- more than 24 hours ago that nobody linked, choosing them by created_at
-- and looking for a link through links_client (migration 00013).
CREATE TABLE client_registrations (
    client_id         text PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
    access_token_hash text NOT NULL,
    metadata          text NOT NULL,
    client_addr       text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL
);
CREATE INDEX client_registrations_created ON client_registrations(created_at);

-- +goose Down
DROP TABLE client_registrations;
