-- +goose Up
-- Erasing an account and deleting a client find their token sessions
-- through the person's or the client's links (token_sessions_link), and
-- the sessions that carry no link through these indexes, instead of
-- reading every token session while holding SQLite's write lock. Every
-- session the product issues carries its link, so the two indexes hold no
-- rows and cost the token writes nothing; an index on account_id or
-- client_id alone would add an entry to every token written, for two rare
-- administrative operations. The same for an erasure's passkey
-- ceremonies: those of a sign-in page carry no account, so only a
-- signed-in person's ceremonies are indexed. TestRemovalPlans and
-- TestRemovalAtScale hold the statements to these.
CREATE INDEX token_sessions_unlinked_account ON token_sessions(account_id) WHERE link_id = '';
CREATE INDEX token_sessions_unlinked_client ON token_sessions(client_id) WHERE link_id = '';
CREATE INDEX webauthn_ceremonies_account ON webauthn_ceremonies(account_id) WHERE account_id <> '';

-- +goose Down
DROP INDEX webauthn_ceremonies_account;
DROP INDEX token_sessions_unlinked_client;
DROP INDEX token_sessions_unlinked_account;
