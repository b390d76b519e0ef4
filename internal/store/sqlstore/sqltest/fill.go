package sqltest

import (
	"testing"

	"gorm.io/gorm"
)

// Fill runs the statements that fill a PostgreSQL test's tables at scale
// (INSERT … SELECT generate_series, ALTER TABLE), in one transaction
// without the store's statement timeout, and fails t on the first error.
// The timeout (10 s, sqlstore's default) is right for the product's
// statements, but a fill of a few hundred thousand rows can outlast it on
// a busy two-core machine, and then the test fails for its setup, not for
// what it checks. The commit is not waited for (synchronous_commit off):
// a test's database is dropped when it ends.
func Fill(t testing.TB, db *gorm.DB, stmts ...string) {
	t.Helper()
	err := db.Transaction(func(tx *gorm.DB) error {
		for _, q := range append([]string{`SET LOCAL statement_timeout = 0`, `SET LOCAL synchronous_commit = off`}, stmts...) {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("sqltest: filling the tables: %v", err)
	}
}
