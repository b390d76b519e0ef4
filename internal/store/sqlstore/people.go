package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

type accountTokenRow struct {
	TokenHash string `gorm:"primaryKey"`
	AccountID string
	Purpose   string
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (accountTokenRow) TableName() string { return "account_tokens" }

type passkeyRow struct {
	ID           string `gorm:"primaryKey"`
	AccountID    string
	CredentialID []byte
	Name         string
	Credential   []byte
	CreatedAt    time.Time
	LastUsedAt   *time.Time
}

func (passkeyRow) TableName() string { return "passkeys" }

type ceremonyRow struct {
	IDHash    string `gorm:"primaryKey;column:id_hash"`
	AccountID string
	Purpose   string
	Data      []byte
	ExpiresAt time.Time
}

func (ceremonyRow) TableName() string { return "webauthn_ceremonies" }

func toAccountToken(r accountTokenRow) store.AccountToken {
	return store.AccountToken{TokenHash: r.TokenHash, AccountID: r.AccountID, Purpose: r.Purpose, Email: r.Email,
		CreatedAt: store.UTC(r.CreatedAt), ExpiresAt: store.UTC(r.ExpiresAt), UsedAt: utcPtr(r.UsedAt)}
}

// CreateAccountToken stores a single-use e-mail link by its hash.
func (s *Store) CreateAccountToken(ctx context.Context, t store.AccountToken) error {
	return s.create(ctx, &accountTokenRow{TokenHash: t.TokenHash, AccountID: t.AccountID, Purpose: t.Purpose, Email: t.Email,
		CreatedAt: store.UTC(t.CreatedAt), ExpiresAt: store.UTC(t.ExpiresAt), UsedAt: utcPtr(t.UsedAt)})
}

// GetAccountToken returns a link by its hash.
func (s *Store) GetAccountToken(ctx context.Context, tokenHash string) (store.AccountToken, error) {
	var r accountTokenRow
	if err := s.q(ctx).Take(&r, "token_hash = ?", tokenHash).Error; err != nil {
		return store.AccountToken{}, translate(err)
	}
	return toAccountToken(r), nil
}

// UseAccountToken marks an unused link used, conditionally, so two
// concurrent uses cannot both win.
func (s *Store) UseAccountToken(ctx context.Context, tokenHash string, now time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&accountTokenRow{}).Where("token_hash = ? AND used_at IS NULL", tokenHash).Update("used_at", store.UTC(now))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			return nil
		}
		var n int64
		if err := tx.Model(&accountTokenRow{}).Where("token_hash = ?", tokenHash).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return store.ErrConflict
	})
}

// CountAccountTokens counts the account's links of a purpose created since.
func (s *Store) CountAccountTokens(ctx context.Context, accountID, purpose string, since time.Time) (int, error) {
	var n int64
	err := s.q(ctx).Model(&accountTokenRow{}).Where("account_id = ? AND purpose = ? AND created_at >= ?", accountID, purpose, store.UTC(since)).
		Count(&n).Error
	return int(n), translate(err)
}

// DeleteAccountTokens deletes the account's unused links of a purpose (or
// of all).
func (s *Store) DeleteAccountTokens(ctx context.Context, accountID, purpose string) error {
	db := s.q(ctx).Where("account_id = ? AND used_at IS NULL", accountID)
	if purpose != "" {
		db = db.Where("purpose = ?", purpose)
	}
	return translate(db.Delete(&accountTokenRow{}).Error)
}

func toPasskey(r passkeyRow) store.Passkey {
	return store.Passkey{ID: r.ID, AccountID: r.AccountID, CredentialID: r.CredentialID, Name: r.Name, Credential: r.Credential,
		CreatedAt: store.UTC(r.CreatedAt), LastUsedAt: utcPtr(r.LastUsedAt)}
}

func fromPasskey(p store.Passkey) passkeyRow {
	return passkeyRow{ID: p.ID, AccountID: p.AccountID, CredentialID: p.CredentialID, Name: p.Name, Credential: p.Credential,
		CreatedAt: store.UTC(p.CreatedAt), LastUsedAt: utcPtr(p.LastUsedAt)}
}

// CreatePasskey inserts a passkey; its credential id is unique.
func (s *Store) CreatePasskey(ctx context.Context, p store.Passkey) error {
	return s.create(ctx, ptr(fromPasskey(p)))
}

// ListPasskeys returns an account's passkeys, oldest first.
func (s *Store) ListPasskeys(ctx context.Context, accountID string) ([]store.Passkey, error) {
	var rows []passkeyRow
	if err := s.q(ctx).Where("account_id = ?", accountID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Passkey, len(rows))
	for i, r := range rows {
		out[i] = toPasskey(r)
	}
	return out, nil
}

// GetPasskeyByCredentialID returns the passkey with a credential id.
func (s *Store) GetPasskeyByCredentialID(ctx context.Context, credentialID []byte) (store.Passkey, error) {
	var r passkeyRow
	if err := s.q(ctx).Take(&r, "credential_id = ?", credentialID).Error; err != nil {
		return store.Passkey{}, translate(err)
	}
	return toPasskey(r), nil
}

// UpdatePasskey applies fn to the current row in one transaction; the id,
// account, credential id and creation time are kept.
func (s *Store) UpdatePasskey(ctx context.Context, id string, fn func(store.Passkey) (store.Passkey, error)) (store.Passkey, error) {
	var out store.Passkey
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r passkeyRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		old := toPasskey(r)
		p, err := fn(old)
		if err != nil {
			return err
		}
		p.ID, p.AccountID, p.CredentialID, p.CreatedAt = old.ID, old.AccountID, old.CredentialID, old.CreatedAt
		if err := tx.Save(ptr(fromPasskey(p))).Error; err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// DeletePasskey deletes one of the account's passkeys.
func (s *Store) DeletePasskey(ctx context.Context, accountID, id string) error {
	res := s.q(ctx).Delete(&passkeyRow{}, "id = ? AND account_id = ?", id, accountID)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CreateWebAuthnCeremony stores a ceremony between its start and finish.
func (s *Store) CreateWebAuthnCeremony(ctx context.Context, c store.WebAuthnCeremony) error {
	return s.create(ctx, &ceremonyRow{IDHash: c.IDHash, AccountID: c.AccountID, Purpose: c.Purpose, Data: c.Data, ExpiresAt: store.UTC(c.ExpiresAt)})
}

// TakeWebAuthnCeremony deletes a ceremony and returns it; of two
// concurrent takes only one gets it.
func (s *Store) TakeWebAuthnCeremony(ctx context.Context, idHash string) (store.WebAuthnCeremony, error) {
	var out store.WebAuthnCeremony
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r ceremonyRow
		if err := lockFor(tx, s.dialect).Take(&r, "id_hash = ?", idHash).Error; err != nil {
			return err
		}
		res := tx.Delete(&ceremonyRow{}, "id_hash = ?", idHash)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return store.ErrNotFound
		}
		out = store.WebAuthnCeremony{IDHash: r.IDHash, AccountID: r.AccountID, Purpose: r.Purpose, Data: r.Data, ExpiresAt: store.UTC(r.ExpiresAt)}
		return nil
	})
	return out, err
}

// EraseAccount turns an account into a tombstone and removes what is
// personal, in one transaction (see store.AccountErasure).
func (s *Store) EraseAccount(ctx context.Context, accountID string, now time.Time) error {
	now = store.UTC(now)
	return s.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&accountRow{}).Where("id = ? AND deleted_at IS NULL", accountID).Updates(map[string]any{
			"email": store.ErasedEmail(accountID), "password_hash": "", "admin": false, "disabled": true,
			"email_verified_at": nil, "deleted_at": now, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return store.ErrNotFound
		}
		var links []linkRow
		if err := tx.Select("id", "status").Where("account_id = ?", accountID).Find(&links).Error; err != nil {
			return err
		}
		var all, active []string
		for _, l := range links {
			all = append(all, l.ID)
			if l.Status == store.LinkActive {
				active = append(active, l.ID)
			}
		}
		if len(active) > 0 {
			if err := tx.Model(&linkRow{}).Where("id IN ?", active).
				Updates(map[string]any{"status": store.LinkRevoked, "revoked_at": now}).Error; err != nil {
				return err
			}
		}
		// The person's token sessions: those issued on any of their links,
		// and those on no link that name them. A link is one person's, so
		// these are every session of theirs, and each set is an index
		// search (token_sessions_link, token_sessions_unlinked_account)
		// where "account_id = ?" would read every session of every account.
		steps := []*gorm.DB{
			tx.Model(&tokenRow{}).Where("link_id = '' AND account_id = ? AND active = ?", accountID, true).Update("active", false),
			tx.Delete(&webSessionRow{}, "account_id = ?", accountID),
			tx.Delete(&accountTokenRow{}, "account_id = ?", accountID),
			tx.Delete(&passkeyRow{}, "account_id = ?", accountID),
			tx.Delete(&ceremonyRow{}, "account_id = ? AND account_id <> ''", accountID), // webauthn_ceremonies_account
			tx.Delete(&activityRow{}, "account_id = ?", accountID),
			tx.Model(&bookingRow{}).Where("account_id = ? AND notes <> ''", accountID).Update("notes", ""),
			tx.Model(&feedRow{}).Where("kind = ? AND account_id = ? AND revoked_at IS NULL", store.FeedAccount, accountID).Update("revoked_at", now),
		}
		if len(all) > 0 {
			// An empty link id is no link: "link_id <> ''" keeps every
			// unlinked session of every account out, and lets the partial
			// index serve the search.
			steps = append(steps, tx.Model(&tokenRow{}).Where("link_id IN ? AND link_id <> '' AND active = ?", all, true).Update("active", false))
		}
		for _, st := range steps {
			if st.Error != nil {
				return st.Error
			}
		}
		return nil
	})
}
