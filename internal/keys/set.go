package keys

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/store"
)

// Purposes are the key purposes a rotation of purpose changes together:
// the token keys of both algorithms (ES256 for access and ID tokens, RS256
// for the ID tokens of clients that choose it), so that `keys rotate`
// leaves neither behind (docs/reference.md §14); any other purpose alone.
func Purposes(purpose string) []string {
	if purpose == store.KeyPurposeToken {
		return []string{store.KeyPurposeToken, store.KeyPurposeTokenRS256}
	}
	return []string{purpose}
}

// Set is several managers published as one key set: the authorization
// server's JWKS holds the ES256 and the RS256 token keys, each with its
// alg and kid.
type Set []*Manager

// Ensure creates the first key of every manager that has none: a database
// made before RS256 ID tokens gets its RS256 key at the next start.
func (s Set) Ensure(ctx context.Context) error {
	for _, m := range s {
		if err := m.Ensure(ctx); err != nil {
			return fmt.Errorf("%s keys: %w", m.purpose, err)
		}
	}
	return nil
}

// VerificationKeys is every manager's VerificationKeys, in order.
func (s Set) VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	all := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, m := range s {
		set, err := m.VerificationKeys(ctx)
		if err != nil {
			return nil, err
		}
		all.Keys = append(all.Keys, set.Keys...)
	}
	return all, nil
}

// PublicJWKS returns the JSON of VerificationKeys.
func (s Set) PublicJWKS(ctx context.Context) ([]byte, error) {
	set, err := s.VerificationKeys(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(set)
}
