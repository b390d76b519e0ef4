package sqlstore

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

func toAccount(r accountRow) store.Account {
	return store.Account{ID: r.ID, Email: r.Email, PasswordHash: r.PasswordHash, Admin: r.Admin,
		Disabled: r.Disabled, CreatedAt: store.UTC(r.CreatedAt), UpdatedAt: store.UTC(r.UpdatedAt),
		EmailVerifiedAt: utcPtr(r.EmailVerifiedAt), DeletedAt: utcPtr(r.DeletedAt)}
}

func fromAccount(a store.Account) accountRow {
	return accountRow{ID: a.ID, Email: strings.ToLower(strings.TrimSpace(a.Email)), PasswordHash: a.PasswordHash,
		Admin: a.Admin, Disabled: a.Disabled, CreatedAt: store.UTC(a.CreatedAt), UpdatedAt: store.UTC(a.UpdatedAt),
		EmailVerifiedAt: utcPtr(a.EmailVerifiedAt), DeletedAt: utcPtr(a.DeletedAt)}
}

// CreateAccount inserts an account; the email is unique, case-insensitively.
func (s *Store) CreateAccount(ctx context.Context, a store.Account) error {
	return s.create(ctx, ptr(fromAccount(a)))
}

// GetAccount returns an account by id.
func (s *Store) GetAccount(ctx context.Context, id string) (store.Account, error) {
	var r accountRow
	if err := s.q(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return store.Account{}, translate(err)
	}
	return toAccount(r), nil
}

// GetAccountByEmail returns an account by email, case-insensitively.
func (s *Store) GetAccountByEmail(ctx context.Context, email string) (store.Account, error) {
	var r accountRow
	if err := s.q(ctx).Take(&r, "email = ?", strings.ToLower(strings.TrimSpace(email))).Error; err != nil {
		return store.Account{}, translate(err)
	}
	return toAccount(r), nil
}

// ListAccounts returns every account ordered by email.
func (s *Store) ListAccounts(ctx context.Context) ([]store.Account, error) {
	var rows []accountRow
	if err := s.q(ctx).Order("email").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Account, len(rows))
	for i, r := range rows {
		out[i] = toAccount(r)
	}
	return out, nil
}

// UpdateAccount applies fn to the current account in one transaction.
func (s *Store) UpdateAccount(ctx context.Context, id string, fn func(store.Account) (store.Account, error)) (store.Account, error) {
	var out store.Account
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var r accountRow
		if err := lockFor(tx, s.dialect).Take(&r, "id = ?", id).Error; err != nil {
			return err
		}
		a, err := fn(toAccount(r))
		if err != nil {
			return err
		}
		a.ID = id
		a.CreatedAt = toAccount(r).CreatedAt
		a.UpdatedAt = store.SystemClock()
		if err := tx.Save(ptr(fromAccount(a))).Error; err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// CreateWebSession stores a sign-in session.
func (s *Store) CreateWebSession(ctx context.Context, ws store.WebSession) error {
	r := webSessionRow{IDHash: ws.IDHash, AccountID: ws.AccountID, CreatedAt: store.UTC(ws.CreatedAt), ExpiresAt: store.UTC(ws.ExpiresAt)}
	return s.create(ctx, &r)
}

// GetWebSession returns a session by the hash of its id.
func (s *Store) GetWebSession(ctx context.Context, idHash string) (store.WebSession, error) {
	var r webSessionRow
	if err := s.q(ctx).Take(&r, "id_hash = ?", idHash).Error; err != nil {
		return store.WebSession{}, translate(err)
	}
	return store.WebSession{IDHash: r.IDHash, AccountID: r.AccountID, CreatedAt: store.UTC(r.CreatedAt), ExpiresAt: store.UTC(r.ExpiresAt)}, nil
}

// GetWebSessionAccount implements store.WebSessions: the session JOIN its
// account (web_sessions.account_id references accounts, which are never
// deleted, only erased in place), one statement.
func (s *Store) GetWebSessionAccount(ctx context.Context, idHash string) (store.WebSession, store.Account, error) {
	var ws webSessionRow
	var a accountRow
	// Every signed-in authorization reads it: sent past gorm (direct).
	b := s.binder()
	err := s.directRow(ctx, `SELECT ws.id_hash, ws.account_id, ws.created_at, ws.expires_at,
 a.id, a.email, a.password_hash, a.admin, a.disabled, a.created_at, a.updated_at, a.email_verified_at, a.deleted_at
FROM web_sessions ws JOIN accounts a ON a.id = ws.account_id
WHERE ws.id_hash = `+b.bind(idHash), b.args, &ws.IDHash, &ws.AccountID, &ws.CreatedAt, &ws.ExpiresAt,
		&a.ID, &a.Email, &a.PasswordHash, &a.Admin, &a.Disabled, &a.CreatedAt, &a.UpdatedAt, &a.EmailVerifiedAt, &a.DeletedAt)
	if err != nil {
		return store.WebSession{}, store.Account{}, translate(err)
	}
	return store.WebSession{IDHash: ws.IDHash, AccountID: ws.AccountID, CreatedAt: store.UTC(ws.CreatedAt), ExpiresAt: store.UTC(ws.ExpiresAt)},
		toAccount(a), nil
}

// DeleteWebSession removes one session.
func (s *Store) DeleteWebSession(ctx context.Context, idHash string) error {
	return translate(s.q(ctx).Delete(&webSessionRow{}, "id_hash = ?", idHash).Error)
}

// DeleteAccountWebSessions removes every session of an account but one.
func (s *Store) DeleteAccountWebSessions(ctx context.Context, accountID, keepIDHash string) error {
	return translate(s.q(ctx).Delete(&webSessionRow{}, "account_id = ? AND id_hash <> ?", accountID, keepIDHash).Error)
}

func ptr[T any](v T) *T { return &v }

// lockFor adds FOR UPDATE on PostgreSQL; SQLite transactions already hold
// the write lock.
func lockFor(tx *gorm.DB, dialect string) *gorm.DB {
	if dialect == "postgres" {
		return tx.Clauses(forUpdate)
	}
	return tx
}

// SearchAccounts returns up to q.Limit+1 accounts whose email contains
// q.Text, ordered by email.
func (s *Store) SearchAccounts(ctx context.Context, q store.AccountQuery) ([]store.Account, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	db := s.q(ctx).Order("email").Limit(limit + 1).Offset(max(q.Offset, 0))
	if t := strings.ToLower(strings.TrimSpace(q.Text)); t != "" {
		// Emails are stored lower-cased, so LIKE on the lowered text is
		// case-insensitive on both backends.
		db = db.Where("email LIKE ? ESCAPE '\\'", "%"+likeEscaper.Replace(t)+"%")
	}
	var rows []accountRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]store.Account, len(rows))
	for i, r := range rows {
		out[i] = toAccount(r)
	}
	return out, nil
}
