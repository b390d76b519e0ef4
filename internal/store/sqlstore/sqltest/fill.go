package sqltest

import (
	"testing"

	"gorm.io/gorm"
)

// Fill runs the statements that fill a test's tables at scale (INSERT …
// SELECT generate_series, ALTER TABLE), or thin and analyze them after
// (DELETE, ANALYZE), as FillFunc does.
func Fill(t testing.TB, db *gorm.DB, stmts ...string) {
	t.Helper()
	FillFunc(t, db, func(tx *gorm.DB) error {
		for _, q := range stmts {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// FillFunc runs fill, which fills a test's tables at scale, in one
// transaction, and fails t on its error. On PostgreSQL the transaction
// has no statement timeout: the store's (10 s, sqlstore's default) is
// right for the product's statements, but a fill of a few hundred
// thousand rows can outlast it on a busy two-core machine, and then the
// test fails for its setup, not for what it checks. Nor is the commit
// waited for (synchronous_commit off): a test's database is dropped when
// it ends. SQLite has neither setting.
func FillFunc(t testing.TB, db *gorm.DB, fill func(tx *gorm.DB) error) {
	t.Helper()
	err := db.Transaction(func(tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			for _, q := range []string{`SET LOCAL statement_timeout = 0`, `SET LOCAL synchronous_commit = off`} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
		}
		return fill(tx)
	})
	if err != nil {
		t.Fatalf("sqltest: filling the tables: %v", err)
	}
}
