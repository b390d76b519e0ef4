package admin

import (
	"context"
	"errors"

	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
)

// RotatedKey is the audit view of a rotation: the purpose and the new key
// id, never key material.
type RotatedKey struct {
	Purpose string `json:"purpose"`
	KID     string `json:"kid"`
}

// RotateSigningKey adds a new current signing key of purpose
// (store.KeyPurposeToken or store.KeyPurposeGrant) and retires the previous
// one, which stays published (internal/keys). Rotating the token keys
// rotates the RS256 ID-token keys with them (keys.Purposes): one new key
// per purpose, in that order. The rotations and their audit events
// (keys.rotate, target "purpose/kid", one per key) are one transaction.
func (s *Service) RotateSigningKey(ctx context.Context, a Actor, purpose string) ([]RotatedKey, error) {
	if purpose != store.KeyPurposeToken && purpose != store.KeyPurposeGrant {
		return nil, invalid("purpose", "purpose must be token or grant")
	}
	if len(s.secret) == 0 {
		return nil, errors.New("admin: no secret key configured to encrypt signing keys")
	}
	var out []RotatedKey
	err := s.inTx(ctx, func(tx Tx) error {
		out = nil
		for _, p := range keys.Purposes(purpose) {
			kid, err := keys.NewManager(tx, s.secret, p, s.clock).Rotate(ctx)
			if err != nil {
				return err
			}
			k := RotatedKey{Purpose: p, KID: kid}
			if err := s.audit(ctx, tx, a, "keys.rotate", p+"/"+kid, nil, k); err != nil {
				return err
			}
			out = append(out, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// IsAdmin is the one admin-role check every front end applies to a
// signed-in account: the role, on an account that is not disabled.
func IsAdmin(acct store.Account) bool {
	return acct.Admin && !acct.Disabled
}
