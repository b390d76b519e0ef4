package sqlstore_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// sqliteURIName is the file name SQLite opens for a "file:" URI
// (https://www.sqlite.org/uri.html): an optional empty or "localhost"
// authority after "//", the path up to the first '?' or '#', and %HH
// escapes decoded. ok is false when SQLite refuses the URI.
func sqliteURIName(dsn string) (name string, ok bool) {
	rest, found := strings.CutPrefix(dsn, "file:")
	if !found {
		return "", false
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			i = len(rest)
		}
		if a := rest[:i]; a != "" && a != "localhost" {
			return "", false
		}
		rest = rest[i:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	hex := func(c byte) (byte, bool) {
		switch {
		case '0' <= c && c <= '9':
			return c - '0', true
		case 'a' <= c && c <= 'f':
			return c - 'a' + 10, true
		case 'A' <= c && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	var b strings.Builder
	for i := 0; i < len(rest); i++ {
		if rest[i] == '%' && i+2 < len(rest) {
			h, ok1 := hex(rest[i+1])
			l, ok2 := hex(rest[i+2])
			if ok1 && ok2 {
				b.WriteByte(h<<4 | l)
				i += 2
				continue
			}
		}
		b.WriteByte(rest[i])
	}
	return b.String(), true
}

// FuzzParseURL: ParseURL never panics; an accepted sqlite:// URL names, as
// SQLite reads the DSN, exactly the file path after sqlite:// (docs/reference.md §1:
// "everything after sqlite:// is a file path"), with the busy timeout,
// WAL, foreign keys and immediate transactions; a postgres URL is passed
// through unchanged; anything else is refused.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"sqlite://var/linkslot.db", "sqlite:///var/lib/linkslot/x.db", "sqlite://", "sqlite://x.db?mode=memory",
		"sqlite://var/a#b.db", "sqlite://var/50%25.db", "sqlite:////tmp/x.db", "sqlite://:memory:", "postgres://u:p@127.0.0.1:5432/db",
		"postgresql:///db?host=/tmp", "postgres://", "mysql://x", "", "SQLITE://x.db", "sqlite://#"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, raw string, busyMS int64) {
		busy := time.Duration(busyMS%3_600_000) * time.Millisecond
		dialect, dsn, err := sqlstore.ParseURL(raw, busy)
		if err != nil {
			if dialect != "" || dsn != "" {
				t.Fatalf("ParseURL(%q) = %q, %q with error %v", raw, dialect, dsn, err)
			}
			return
		}
		switch dialect {
		case "sqlite":
			path, ok := strings.CutPrefix(raw, "sqlite://")
			if !ok || path == "" || strings.Contains(path, "?") {
				t.Fatalf("ParseURL(%q) accepted as sqlite: %q", raw, dsn)
			}
			name, ok := sqliteURIName(dsn)
			if !ok || name != path {
				t.Fatalf("ParseURL(%q): SQLite opens %q (ok=%v) from %q, not the path %q", raw, name, ok, dsn, path)
			}
			q, err := url.ParseQuery(dsn[strings.IndexByte(dsn, '?')+1:])
			if err != nil || q.Get("_txlock") != "immediate" || len(q["_pragma"]) != 4 || !strings.HasPrefix(q["_pragma"][0], "busy_timeout(") {
				t.Fatalf("ParseURL(%q): DSN options %q (%v)", raw, dsn, err)
			}
		case "postgres":
			if dsn != raw || !(strings.HasPrefix(raw, "postgres://") || strings.HasPrefix(raw, "postgresql://")) {
				t.Fatalf("ParseURL(%q) = postgres %q", raw, dsn)
			}
		default:
			t.Fatalf("ParseURL(%q): dialect %q", raw, dialect)
		}
	})
}
