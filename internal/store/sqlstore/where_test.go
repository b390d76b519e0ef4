package sqlstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// TestWhere: the name of a database in messages says which file or server
// it is, and never carries the password or the query.
func TestWhere(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ url, want string }{
		{"sqlite://var/linkslot.db", "SQLite file " + filepath.Join(wd, "var", "linkslot.db")},
		{"sqlite:///srv/x.db", "SQLite file /srv/x.db"},
		{"postgres://linkslot:hunter2@db.internal:5432/linkslot?sslmode=require&password=hunter2", "PostgreSQL database linkslot on db.internal:5432 as user linkslot"},
		{"postgresql:///bookings?host=/run/postgresql&port=5433", "PostgreSQL database bookings on /run/postgresql:5433"},
		{"postgres://db/", "PostgreSQL database (the user's default) on db"},
	} {
		got := sqlstore.Where(tt.url)
		if got != tt.want || strings.Contains(got, "hunter2") {
			t.Errorf("Where(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	if p, ok := sqlstore.SQLiteFile("postgres://db/x"); ok || p != "" {
		t.Errorf("SQLiteFile of a PostgreSQL URL = %q, %v", p, ok)
	}
}
