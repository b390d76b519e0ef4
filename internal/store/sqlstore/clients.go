package sqlstore

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

var forUpdate = clause.Locking{Strength: "UPDATE"}

func toClient(r clientRow) store.Client {
	return store.Client{ID: r.ID, Name: r.Name, SecretHash: r.SecretHash, Public: r.Public,
		RedirectURIs: decodeList(r.RedirectURIs), AllowedScopes: decodeList(r.AllowedScopes),
		DefaultScopes: decodeList(r.DefaultScopes), GrantTypes: decodeList(r.GrantTypes),
		LogoURL: r.LogoURL, Contact: r.Contact, Disabled: r.Disabled,
		PinnedDocument: r.PinnedDocument, OpenLinked: r.OpenLinked, JWKSURI: r.JWKSURI,
		IDTokenSignedResponseAlg: r.IDTokenAlg, CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt)}
}

func fromClient(c store.Client) clientRow {
	return clientRow{ID: c.ID, Name: c.Name, SecretHash: c.SecretHash, Public: c.Public,
		RedirectURIs: encodeList(c.RedirectURIs), AllowedScopes: encodeList(c.AllowedScopes),
		DefaultScopes: encodeList(c.DefaultScopes), GrantTypes: encodeList(c.GrantTypes),
		LogoURL: c.LogoURL, Contact: c.Contact, Disabled: c.Disabled,
		PinnedDocument: c.PinnedDocument, OpenLinked: c.OpenLinked, JWKSURI: c.JWKSURI,
		IDTokenAlg: c.IDTokenSignedResponseAlg, CreatedAt: store.UTC(c.CreatedAt), UpdatedAt: store.UTC(c.UpdatedAt)}
}

// CreateClient inserts a client; a taken id answers ErrAlreadyExists.
func (s *Store) CreateClient(ctx context.Context, c store.Client) error {
	return s.create(ctx, ptr(fromClient(c)))
}

// GetClient returns a client by id.
func (s *Store) GetClient(ctx context.Context, id string) (store.Client, error) {
	var r clientRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.Client{}, translate(err)
	}
	return toClient(r), nil
}

// ListClients returns every client ordered by id.
func (s *Store) ListClients(ctx context.Context) ([]store.Client, error) {
	var rows []clientRow
	if err := s.q(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Client, len(rows))
	for i, r := range rows {
		out[i] = toClient(r)
	}
	return out, nil
}

// UpdateClient applies fn to the current client in one transaction.
func (s *Store) UpdateClient(ctx context.Context, id string, fn func(store.Client) (store.Client, error)) (store.Client, error) {
	var out store.Client
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r clientRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		old := toClient(r)
		c, err := fn(old)
		if err != nil {
			return err
		}
		c.ID, c.CreatedAt, c.UpdatedAt = id, old.CreatedAt, store.SystemClock()
		if err := tx.Save(ptr(fromClient(c))).Error; err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// DeleteClient deletes a client, its links and its token sessions.
func (s *Store) DeleteClient(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		// Its token sessions: those issued on its links, and those on no
		// link that name it. A link is one client's, so these are all of
		// them, each found through an index (token_sessions_link,
		// token_sessions_unlinked_client) where "client_id = ?" would read
		// every session of every client.
		if err := tx.Delete(&tokenRow{}, "link_id IN (SELECT id FROM links WHERE client_id = ?) AND link_id <> ''", id).Error; err != nil {
			return err
		}
		if err := tx.Delete(&tokenRow{}, "link_id = '' AND client_id = ?", id).Error; err != nil {
			return err
		}
		res := tx.Delete(&clientRow{}, "id = ?", id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}
