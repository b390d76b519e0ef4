-- +goose Up
-- Every token-path lookup has an index that matches its predicate exactly
-- (see the PostgreSQL migration of the same number).
CREATE INDEX token_sessions_request_kind ON token_sessions(request_id, kind);
DROP INDEX token_sessions_request;

-- +goose Down
CREATE INDEX token_sessions_request ON token_sessions(request_id);
DROP INDEX token_sessions_request_kind;
