package sqltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"sync"

	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/migrations"
)

// Creating a database and running every migration on it (extensions
// included) costs far more than copying an already migrated one, so
// Postgres copies a template database that is built once per server and
// migration set. Its name carries a hash of the embedded migrations, so a
// new migration builds a new template; building is serialized across test
// processes with an advisory lock.

type templateOnce struct {
	once sync.Once
	name string
	err  error
}

var templates sync.Map // admin URL → *templateOnce

// migratedTemplate returns the name of a migrated template database on the
// server of admin, building it on first use.
func migratedTemplate(admin string) (string, error) {
	v, _ := templates.LoadOrStore(admin, &templateOnce{})
	t := v.(*templateOnce)
	t.once.Do(func() { t.name, t.err = buildTemplate(admin) })
	return t.name, t.err
}

func migrationsHash() (string, error) {
	fsys, err := migrations.FS("postgres")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func buildTemplate(admin string) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "linkslot_tmpl_" + sum
	ctx := context.Background()
	a, err := sqlstore.Open(ctx, admin, sqlstore.Options{MaxOpenConns: 1})
	if err != nil {
		return "", fmt.Errorf("connect to test PostgreSQL: %w", err)
	}
	defer a.Close()
	db := a.DB()
	// One connection, so the session-level advisory lock is held by it.
	const lockKey = 0x6c696e6b736c6f74 // "linkslot"
	if err := db.Exec("SELECT pg_advisory_lock(?)", int64(lockKey)).Error; err != nil {
		return "", err
	}
	defer db.Exec("SELECT pg_advisory_unlock(?)", int64(lockKey))
	var n int64
	if err := db.Raw("SELECT count(*) FROM pg_database WHERE datname = ?", name).Scan(&n).Error; err != nil {
		return "", err
	}
	if n == 1 {
		return name, nil
	}
	build := name + "_build"
	if err := db.Exec("DROP DATABASE IF EXISTS " + build + " WITH (FORCE)").Error; err != nil {
		return "", err
	}
	if err := db.Exec("CREATE DATABASE " + build).Error; err != nil {
		return "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/" + build
	s, err := sqlstore.Open(ctx, u.String(), sqlstore.Options{MaxOpenConns: 1})
	if err != nil {
		return "", err
	}
	_, err = s.Migrate(ctx)
	s.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	// Renamed only once complete, so an existing template is always whole.
	if err := db.Exec("ALTER DATABASE " + build + " RENAME TO " + name).Error; err != nil {
		return "", err
	}
	return name, nil
}
