// Package migrations embeds Linkslot's schema: versioned SQL, one set per
// dialect, applied with goose. SQL is the source of truth; the gorm models in
// store/sqlstore only map rows.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// FS returns the migrations of a dialect ("postgres" or "sqlite").
func FS(dialect string) (fs.FS, error) {
	switch dialect {
	case "postgres", "sqlite":
		return fs.Sub(files, dialect)
	}
	return nil, fmt.Errorf("migrations: unknown dialect %q", dialect)
}
