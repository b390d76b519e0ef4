package sqlstore

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// SQLiteFile returns the absolute path of the file an sqlite:// database
// URL names (a relative one resolved against the working folder), and
// false for any other URL.
func SQLiteFile(raw string) (string, bool) {
	path, ok := strings.CutPrefix(raw, "sqlite://")
	if !ok || path == "" {
		return "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path, true
	}
	return abs, true
}

// Where names the database a LINKSLOT_DATABASE_URL opens, for start-up
// lines and error messages: "SQLite file /srv/var/linkslot.db" or
// "PostgreSQL database linkslot on db:5432 as user linkslot". It never
// includes a password (nor any other part of the URL's query).
func Where(raw string) string {
	if path, ok := SQLiteFile(raw); ok {
		return "SQLite file " + path
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "the database of LINKSLOT_DATABASE_URL (not a sqlite:// or postgres:// URL)"
	}
	host := u.Host
	if host == "" {
		host = u.Query().Get("host") // postgres:///db?host=/run/postgresql
		if p := u.Query().Get("port"); p != "" {
			host += ":" + p
		}
	}
	if host == "" {
		host = "the default host"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = u.Query().Get("dbname")
	}
	s := fmt.Sprintf("PostgreSQL database %s on %s", orDefault(db, "(the user's default)"), host)
	if name := u.User.Username(); name != "" {
		s += " as user " + name
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
