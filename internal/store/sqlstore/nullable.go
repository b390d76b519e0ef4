package sqlstore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Nullable columns of the statements sent past gorm (direct.go), scanned
// by value. A **string or *time.Time destination costs an allocation per
// non-NULL value, on either path: pgx and database/sql each make the
// pointer. These types take pgx's own scan (pgtype's TextScanner,
// BoolScanner, TimestamptzScanner) and database/sql's (sql.Null's Scan,
// for transactions and SQLite, whose booleans are integers), and leave the
// zero value for NULL.

// nullString is a text column that may be NULL.
type nullString struct{ sql.Null[string] }

func (n *nullString) ScanText(v pgtype.Text) error {
	n.V, n.Valid = v.String, v.Valid
	return nil
}

// nullBool is a boolean column that may be NULL.
type nullBool struct{ sql.Null[bool] }

func (n *nullBool) ScanBool(v pgtype.Bool) error {
	n.V, n.Valid = v.Bool, v.Valid
	return nil
}

// nullTime is a timestamp column that may be NULL.
type nullTime struct{ sql.Null[time.Time] }

func (n *nullTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if v.Valid && v.InfinityModifier != pgtype.Finite {
		return fmt.Errorf("sqlstore: an infinite timestamp")
	}
	n.V, n.Valid = v.Time, v.Valid
	return nil
}
