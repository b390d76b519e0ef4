-- +goose Up
-- The algorithm of a client's ID tokens (id_token_signed_response_alg,
-- docs/reference.md §14): ES256, RS256, or empty for LINKSLOT_ID_TOKEN_ALG.
ALTER TABLE clients ADD COLUMN id_token_signed_response_alg text NOT NULL DEFAULT ''
    CHECK (id_token_signed_response_alg IN ('', 'ES256', 'RS256'));

-- +goose Down
ALTER TABLE clients DROP COLUMN id_token_signed_response_alg;
