package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	sqlite "github.com/glebarez/go-sqlite"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// translate maps driver errors to store sentinels, once, at the backend
// edge. The original error stays wrapped for logs.
func translate(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{store.ErrNotFound, store.ErrAlreadyExists, store.ErrConflict, store.ErrOverlap, store.ErrUnavailable, store.ErrInvalidText} {
		if errors.Is(err, s) {
			return err
		}
	}
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "23505":
			return fmt.Errorf("%w: %s", store.ErrAlreadyExists, pg.ConstraintName)
		case pg.Code == "23503":
			return fmt.Errorf("%w: still referenced (%s)", store.ErrConflict, pg.ConstraintName)
		case pg.Code == "23P01":
			return fmt.Errorf("%w (%s)", store.ErrOverlap, pg.ConstraintName)
		case pg.Code == "40001", pg.Code == "40P01":
			return fmt.Errorf("%w: %w: %s", store.ErrRetry, store.ErrConflict, pg.Code)
		case pg.Code == "55P03":
			return fmt.Errorf("%w: %s", store.ErrConflict, pg.Code)
		case pg.Code == "22021", pg.Code == "22P05": // character_not_in_repertoire, untranslatable_character
			return fmt.Errorf("%w (SQLSTATE %s)", store.ErrInvalidText, pg.Code)
		case pg.Code == "57014", strings.HasPrefix(pg.Code, "08"), pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03", pg.Code == "53300":
			return fmt.Errorf("%w: %s", store.ErrUnavailable, pg.Code)
		}
		return err
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() {
		case 1555, 2067: // SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE
			return fmt.Errorf("%w: %s", store.ErrAlreadyExists, lite.Error())
		case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
			return fmt.Errorf("%w: still referenced", store.ErrConflict)
		case 5, 6, 517, 261: // BUSY, LOCKED, BUSY_SNAPSHOT, BUSY_RECOVERY
			return fmt.Errorf("%w: database is busy", store.ErrUnavailable)
		}
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	if errors.Is(err, driver.ErrBadConn) {
		// database/sql gave up on a connection the server closed (a
		// restart or an outage in the middle of a transaction).
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("%w: %s", store.ErrUnavailable, redactErr(err))
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %s", store.ErrUnavailable, redactErr(err))
	}
	if strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection refused") {
		return fmt.Errorf("%w: %s", store.ErrUnavailable, redactErr(err))
	}
	return err
}

var passwordInURL = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
var passwordParam = regexp.MustCompile(`(password=)\S+`)

// redactErr removes passwords from driver errors that quote the DSN.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := passwordInURL.ReplaceAllString(err.Error(), "${1}****@")
	msg = passwordParam.ReplaceAllString(msg, "${1}****")
	return errors.New(msg)
}
