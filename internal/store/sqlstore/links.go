package sqlstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

func toLink(r linkRow) store.Link {
	return store.Link{ID: r.ID, AccountID: r.AccountID, ClientID: r.ClientID, Scopes: decodeList(r.Scopes),
		Status: r.Status, CreatedAt: store.UTC(r.CreatedAt), LastUsedAt: store.UTC(r.LastUsedAt), RevokedAt: utcPtr(r.RevokedAt)}
}

// UpsertLink creates or updates the active link of (account, client).
// Two first connections racing on PostgreSQL both find no active link; the
// loser's insert hits links_one_active, and a second attempt then updates
// the winner's link.
func (s *Store) UpsertLink(ctx context.Context, accountID, clientID string, scopes []string, now time.Time) (store.Link, error) {
	l, err := s.upsertLink(ctx, accountID, clientID, scopes, now)
	if errors.Is(err, store.ErrAlreadyExists) {
		l, err = s.upsertLink(ctx, accountID, clientID, scopes, now)
	}
	return l, err
}

func (s *Store) upsertLink(ctx context.Context, accountID, clientID string, scopes []string, now time.Time) (store.Link, error) {
	now = store.UTC(now)
	var out store.Link
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r linkRow
		err := lockFor(tx, s.dialect).Take(&r, "account_id = ? AND client_id = ? AND status = ?", accountID, clientID, store.LinkActive).Error
		switch {
		case err == nil:
			r.Scopes = encodeList(scopes)
			r.LastUsedAt = now
			if err := tx.Save(&r).Error; err != nil {
				return err
			}
		case translate(err) == store.ErrNotFound:
			r = linkRow{ID: store.NewID("lnk"), AccountID: accountID, ClientID: clientID, Scopes: encodeList(scopes),
				Status: store.LinkActive, CreatedAt: now, LastUsedAt: now}
			if err := tx.Create(&r).Error; err != nil {
				return err
			}
		default:
			return err
		}
		out = toLink(r)
		return nil
	})
	return out, err
}

// GetLink returns a link by id, whatever its status.
func (s *Store) GetLink(ctx context.Context, id string) (store.Link, error) {
	var r linkRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.Link{}, translate(err)
	}
	return toLink(r), nil
}

// GetActiveLink returns the active link of (account, client).
func (s *Store) GetActiveLink(ctx context.Context, accountID, clientID string) (store.Link, error) {
	var r linkRow
	if err := s.q(ctx).Take(&r, "account_id = ? AND client_id = ? AND status = ?", accountID, clientID, store.LinkActive).Error; err != nil {
		return store.Link{}, translate(err)
	}
	return toLink(r), nil
}

// GetClientLink implements store.Links: the client LEFT JOIN the active
// link of (account, client) — links_one_active makes it at most one — one
// statement, scanned column by column.
func (s *Store) GetClientLink(ctx context.Context, clientID, accountID string) (store.Client, *store.Link, error) {
	var (
		c              clientRow
		lid, lscopes   nullString
		lcreated, used nullTime
	)
	// Every authorization reads it: sent past gorm (direct).
	b := s.binder()
	err := s.directRow(ctx, `SELECT c.id, c.name, c.secret_hash, c.public, c.redirect_uris, c.allowed_scopes, c.default_scopes,
 c.grant_types, c.logo_url, c.contact, c.disabled, c.pinned_document, c.open_linked, c.jwks_uri, c.id_token_signed_response_alg,
 c.created_at, c.updated_at,
 l.id, l.scopes, l.created_at, l.last_used_at
FROM clients c LEFT JOIN links l ON l.client_id = c.id AND l.account_id = `+b.bind(accountID)+` AND l.status = `+b.bind(store.LinkActive)+`
WHERE c.id = `+b.bind(clientID), b.args, &c.ID, &c.Name, &c.SecretHash, &c.Public, &c.RedirectURIs,
		&c.AllowedScopes, &c.DefaultScopes, &c.GrantTypes, &c.LogoURL, &c.Contact, &c.Disabled, &c.PinnedDocument, &c.OpenLinked,
		&c.JWKSURI, &c.IDTokenAlg, &c.CreatedAt, &c.UpdatedAt, &lid, &lscopes, &lcreated, &used)
	if err != nil {
		return store.Client{}, nil, translate(err)
	}
	if !lid.Valid {
		return toClient(c), nil, nil
	}
	l := toLink(linkRow{ID: lid.V, AccountID: accountID, ClientID: c.ID, Scopes: lscopes.V, Status: store.LinkActive,
		CreatedAt: lcreated.V, LastUsedAt: used.V})
	return toClient(c), &l, nil
}

// ListAccountLinks returns every link of an account, newest first.
func (s *Store) ListAccountLinks(ctx context.Context, accountID string) ([]store.Link, error) {
	var rows []linkRow
	if err := s.q(ctx).Where("account_id = ?", accountID).Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Link, len(rows))
	for i, r := range rows {
		out[i] = toLink(r)
	}
	return out, nil
}

// TouchLink records that a link was used; it writes at most once a minute
// per link so the hot path stays read-mostly, except that a link never
// used since it was made (last_used_at = created_at) records its first
// use at once, so Connected apps shows it (docs/reference.md §15).
func (s *Store) TouchLink(ctx context.Context, id string, now time.Time) error {
	now = store.UTC(now)
	return translate(s.q(ctx).Model(&linkRow{}).
		Where("id = ? AND (last_used_at < ? OR (last_used_at <= created_at AND last_used_at < ?))", id, now.Add(-time.Minute), now).
		Update("last_used_at", now).Error)
}

// RevokeLink revokes a link and deactivates all its token sessions.
// Revoking a revoked link keeps its first revocation time.
func (s *Store) RevokeLink(ctx context.Context, id string, now time.Time) error {
	now = store.UTC(now)
	return s.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&linkRow{}).Where("id = ? AND status = ?", id, store.LinkActive).
			Updates(map[string]any{"status": store.LinkRevoked, "revoked_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			var n int64
			if err := tx.Model(&linkRow{}).Where("id = ?", id).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return store.ErrNotFound
			}
		}
		// link_id <> '' is the partial index's own condition, which SQLite
		// does not infer from link_id = ?: without it a revocation scanned
		// every token session.
		return tx.Model(&tokenRow{}).Where("link_id = ? AND link_id <> '' AND active = ?", id, true).Update("active", false).Error
	})
}
