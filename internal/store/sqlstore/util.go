package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

func weekday(d int) time.Weekday { return time.Weekday(d) }

func orderBy(e clause.Expression) clause.OrderBy {
	return clause.OrderBy{Expression: e}
}

// create inserts one row. Inside InTx it runs in a savepoint, so a failed
// insert (a taken key answering ErrAlreadyExists) leaves the enclosing
// transaction usable on PostgreSQL as it is on SQLite; outside a transaction
// it is a single statement. omit names fields the insert leaves out.
func (s *Store) create(ctx context.Context, row any, omit ...string) error {
	if s.sqlDB == nil && s.dialect == "postgres" {
		return s.tx(ctx, func(tx *gorm.DB) error { return tx.Omit(omit...).Create(row).Error })
	}
	return translate(s.q(ctx).Omit(omit...).Create(row).Error)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
