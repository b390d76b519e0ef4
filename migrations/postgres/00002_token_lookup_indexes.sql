-- +goose Up
-- Every token-path lookup has an index that matches its predicate exactly,
-- so its plan does not depend on fresh statistics: a code exchange reads
-- the PKCE and OpenID sessions of its request by (request_id, kind), which
-- (kind, signature_hash) and (request_id) alone left to the planner's
-- estimates. The new index also serves every request_id-only lookup.
-- Building it blocks writes to token_sessions for as long as it takes (a
-- second or two per million rows); statement_timeout does not apply here.
SET LOCAL statement_timeout = 0;
CREATE INDEX token_sessions_request_kind ON token_sessions(request_id, kind);
DROP INDEX token_sessions_request;

-- +goose Down
SET LOCAL statement_timeout = 0;
CREATE INDEX token_sessions_request ON token_sessions(request_id);
DROP INDEX token_sessions_request_kind;
