-- +goose NO TRANSACTION
-- +goose Up
-- Erasing an account and deleting a client find their token sessions
-- through the person's or the client's links (token_sessions_link), and
-- the sessions that carry no link through these indexes, instead of
-- reading every token session: the hottest table, which holds every live
-- token and an hour of spent ones. Every session the product issues
-- carries its link, so the two indexes hold no rows and cost the token
-- writes nothing; an index on account_id or client_id alone would add an
-- entry to every token written, for two rare administrative operations.
-- The same for an erasure's passkey ceremonies: those of a sign-in page
-- carry no account, so only a signed-in person's ceremonies are indexed.
-- TestRemovalPlans and TestRemovalAtScale hold the statements to these.
--
-- Built CONCURRENTLY, so tokens stay writable while they build; hence no
-- transaction, and each is dropped first so that an interrupted build (an
-- invalid index) is simply built again.
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_unlinked_account;
CREATE INDEX CONCURRENTLY token_sessions_unlinked_account ON token_sessions(account_id) WHERE link_id = '';
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_unlinked_client;
CREATE INDEX CONCURRENTLY token_sessions_unlinked_client ON token_sessions(client_id) WHERE link_id = '';
DROP INDEX CONCURRENTLY IF EXISTS webauthn_ceremonies_account;
CREATE INDEX CONCURRENTLY webauthn_ceremonies_account ON webauthn_ceremonies(account_id) WHERE account_id <> '';
RESET statement_timeout;

-- +goose Down
SET statement_timeout = 0;
DROP INDEX CONCURRENTLY IF EXISTS webauthn_ceremonies_account;
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_unlinked_client;
DROP INDEX CONCURRENTLY IF EXISTS token_sessions_unlinked_account;
RESET statement_timeout;
