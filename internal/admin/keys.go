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
// one, which stays published (internal/keys). The rotation and its audit
// event (keys.rotate, target "purpose/kid") are one transaction.
func (s *Service) RotateSigningKey(ctx context.Context, a Actor, purpose string) (RotatedKey, error) {
	if purpose != store.KeyPurposeToken && purpose != store.KeyPurposeGrant {
		return RotatedKey{}, invalid("purpose", "purpose must be token or grant")
	}
	if len(s.secret) == 0 {
		return RotatedKey{}, errors.New("admin: no secret key configured to encrypt signing keys")
	}
	var out RotatedKey
	err := s.inTx(ctx, func(tx Tx) error {
		kid, err := keys.NewManager(tx, s.secret, purpose, s.clock).Rotate(ctx)
		if err != nil {
			return err
		}
		out = RotatedKey{Purpose: purpose, KID: kid}
		return s.audit(ctx, tx, a, "keys.rotate", purpose+"/"+kid, nil, out)
	})
	return out, err
}

// IsAdmin is the one admin-role check every front end applies to a
// signed-in account: the role, on an account that is not disabled.
func IsAdmin(acct store.Account) bool {
	return acct.Admin && !acct.Disabled
}
