package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestUpgradeAccountsTrust fills a database with the first schema (rows
// written by plain SQL, as the previous release wrote them), upgrades it to
// the current one, and checks that every row reads back, that existing
// administrators count as verified and other people do not, and that the
// new tables work on the upgraded data — on both backends.
func TestUpgradeAccountsTrust(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := openFirstSchema(t, backend)
			created := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			db := s.DB()
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{"INSERT INTO accounts (id, email, password_hash, admin, disabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
					[]any{"acct_person", "person@example.com", "$argon2id$old", false, false, created, created}},
				{"INSERT INTO accounts (id, email, password_hash, admin, disabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
					[]any{"acct_admin", "admin@example.com", "$argon2id$old", true, false, created, created}},
				{"INSERT INTO web_sessions (id_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
					[]any{"ws1", "acct_person", created, created.Add(12 * time.Hour)}},
				{"INSERT INTO clients (id, name, public, redirect_uris, allowed_scopes, default_scopes, grant_types, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
					[]any{"agent", "Agent", true, `["http://127.0.0.1/cb"]`, `["openid"]`, `[]`, `["authorization_code"]`, created, created}},
				{"INSERT INTO links (id, account_id, client_id, scopes, status, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
					[]any{"link_1", "acct_person", "agent", `["openid"]`, "active", created, created}},
				{"INSERT INTO activities (id, account_id, link_id, client_id, tool, arguments, summary, confirmation_text, idempotency_key, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
					[]any{"act_1", "acct_person", "link_1", "agent", "cancel_my_booking", "{}", "Cancel it", "yes", "key-0000000000000001", "{}", created}},
			} {
				if err := db.Exec(q.sql, q.args...).Error; err != nil {
					t.Fatalf("fill the first schema: %v", err)
				}
			}
			if ok, _ := s.MigrationsCurrent(ctx); ok {
				t.Fatal("the first schema already counts as current: no upgrade under test")
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatalf("upgrade: %v", err)
			}

			person, err := s.GetAccount(ctx, "acct_person")
			if err != nil || person.Email != "person@example.com" || person.PasswordHash != "$argon2id$old" || person.EmailVerifiedAt != nil || person.DeletedAt != nil {
				t.Fatalf("person after upgrade = %+v, %v", person, err)
			}
			adm, err := s.GetAccount(ctx, "acct_admin")
			if err != nil || adm.EmailVerifiedAt == nil || !adm.EmailVerifiedAt.Equal(created) {
				t.Fatalf("administrator after upgrade = %+v, %v (want verified at creation)", adm, err)
			}
			if l, err := s.GetLink(ctx, "link_1"); err != nil || l.Status != store.LinkActive {
				t.Fatalf("link after upgrade = %+v, %v", l, err)
			}
			if acts, err := s.ListActivity(ctx, "acct_person", 10, 0); err != nil || len(acts) != 1 {
				t.Fatalf("activity after upgrade = %+v, %v", acts, err)
			}

			// The new tables work on the upgraded rows.
			now := created.Add(time.Hour)
			if err := s.CreateAccountToken(ctx, store.AccountToken{TokenHash: "th", AccountID: "acct_person", Purpose: store.TokenVerifyEmail,
				Email: person.Email, CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if err := s.CreatePasskey(ctx, store.Passkey{ID: "pk_1", AccountID: "acct_person", CredentialID: []byte{1, 2, 3}, Name: "Laptop",
				Credential: []byte("{}"), CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
			if err := s.EraseAccount(ctx, "acct_person", now); err != nil {
				t.Fatalf("erase an upgraded account: %v", err)
			}
			if _, err := s.GetAccountByEmail(ctx, "person@example.com"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the address is still taken after erasure: %v", err)
			}
			if l, _ := s.GetLink(ctx, "link_1"); l.Status != store.LinkRevoked {
				t.Errorf("link after erasure = %+v", l)
			}
		})
	}
}

// openFirstSchema opens an empty database of backend with only the first
// migration applied, for a test to fill as the first release wrote it and
// then upgrade; the store is closed when the test ends.
func openFirstSchema(t *testing.T, backend string) *sqlstore.Store {
	t.Helper()
	return openSchemaAt(t, backend, 1)
}

// openSchemaAt opens a fresh database of backend migrated up to version.
func openSchemaAt(t *testing.T, backend string, version int64) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, sqltest.MustURL(t, backend), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.MigrateTo(ctx, version); err != nil {
		t.Fatalf("migrate to schema %d: %v", version, err)
	}
	return s
}
