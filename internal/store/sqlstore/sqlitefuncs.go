package sqlstore

import (
	"database/sql/driver"
	"strings"
	"sync"

	sqlite "github.com/glebarez/go-sqlite"
)

// SQLite's lower() folds ASCII only, while PostgreSQL's and Go's fold all of
// Unicode, so "Élan" ranked differently in business search on the two
// backends. unicodeLower is registered with the driver once per process as
// linkslot_lower and used wherever SQL compares lower-cased text on SQLite.
const sqliteLower = "linkslot_lower"

var registerSQLiteFuncs = sync.OnceValue(func() error {
	return sqlite.RegisterDeterministicScalarFunction(sqliteLower, 1, unicodeLower)
})

func unicodeLower(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case string:
		return strings.ToLower(v), nil
	case []byte:
		return strings.ToLower(string(v)), nil
	}
	return args[0], nil
}

// lowerFunc is the SQL function that lower-cases text like Go does.
func (s *Store) lowerFunc() string {
	if s.dialect == "sqlite" {
		return sqliteLower
	}
	return "lower"
}
