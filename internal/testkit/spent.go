package testkit

import (
	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// FillSpentTokens inserts n spent, expired token sessions of every kind
// into token_sessions (PostgreSQL), five per request id, fifty per link id,
// for clientID and accountID, in one INSERT … SELECT generate_series, and
// switches autovacuum off for the table so that nothing analyzes them: the
// state of a table after a busy hour, before its statistics catch up. The
// table's indexes are dropped first and built again after, in the same
// transaction (a sorted build is many times faster than n insertions);
// building them records the table's size, as any index build does, but no
// column statistics.
func FillSpentTokens(db *gorm.DB, n int, clientID, accountID string) error {
	return db.Transaction(func(tx *gorm.DB) error {
		for _, q := range []string{`SET LOCAL statement_timeout = 0`, `SET LOCAL maintenance_work_mem = '128MB'`,
			`SET LOCAL synchronous_commit = off`, `ALTER TABLE token_sessions SET (autovacuum_enabled = false)`} {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		var idx []struct{ Indexname, Indexdef string }
		if err := tx.Raw(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'token_sessions' AND indexname <> 'token_sessions_pkey'`).
			Scan(&idx).Error; err != nil {
			return err
		}
		stmts := []string{`ALTER TABLE token_sessions DROP CONSTRAINT token_sessions_pkey`}
		for _, i := range idx {
			stmts = append(stmts, `DROP INDEX `+i.Indexname)
		}
		for _, q := range stmts {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		k := store.TokenKinds
		if err := tx.Exec(`INSERT INTO token_sessions
 (kind, signature_hash, request_id, client_id, account_id, link_id, active, request, expires_at, created_at)
SELECT (ARRAY[?, ?, ?, ?, ?])[1 + i % 5], lpad(i::text, 43, 's'), 'spent-' || (i / 5), ?, ?, 'link-spent-' || (i / 50),
 false, '\x7b7d'::bytea, now() - interval '1 hour', now() - interval '2 hours'
FROM generate_series(1, ?) AS i`, k[0], k[1], k[2], k[3], k[4], clientID, accountID, n).Error; err != nil {
			return err
		}
		stmts = []string{`ALTER TABLE token_sessions ADD PRIMARY KEY (kind, signature_hash)`}
		for _, i := range idx {
			stmts = append(stmts, i.Indexdef)
		}
		for _, q := range stmts {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		return nil
	})
}
