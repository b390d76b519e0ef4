package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

func weekday(d int) time.Weekday { return time.Weekday(d) }

func orderBy(e clause.Expression) clause.OrderBy {
	return clause.OrderBy{Expression: e}
}

// create inserts one row. Inside InTx it runs in a savepoint, so a failed
// insert (a taken key answering ErrAlreadyExists) leaves the enclosing
// transaction usable on PostgreSQL as it is on SQLite; outside a transaction
// it is a single statement.
func (s *Store) create(ctx context.Context, row any) error {
	if s.sqlDB == nil && s.dialect == "postgres" {
		return s.tx(ctx, func(tx *gorm.DB) error { return tx.Create(row).Error })
	}
	return translate(s.q(ctx).Create(row).Error)
}

// firstRow moves rs, the rows of a single-row read that answered err, to
// its row: ErrNotFound when there is none, the translated error when the
// read failed (rs is then closed, or was never opened).
func firstRow(rs *sql.Rows, err error) error {
	if err != nil {
		return translate(err)
	}
	if rs.Next() {
		return nil
	}
	err = rs.Err()
	rs.Close()
	if err != nil {
		return translate(err)
	}
	return store.ErrNotFound
}
