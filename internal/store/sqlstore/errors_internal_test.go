package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/linkslot/linkslot/internal/store"
)

// TestTranslate checks the one place driver errors become sentinels, with
// the errors the drivers actually return (the conformance suite and
// errors_test.go provoke them for real).
func TestTranslate(t *testing.T) {
	pg := func(code string) error {
		return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, ConstraintName: "c"})
	}
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name string
		in   error
		want error // nil: passed through unchanged
	}{
		{"nil", nil, nil},
		{"record not found", gorm.ErrRecordNotFound, store.ErrNotFound},
		{"sentinel passes", fmt.Errorf("x: %w", store.ErrOverlap), store.ErrOverlap},
		{"unique violation", pg("23505"), store.ErrAlreadyExists},
		{"exclusion violation", pg("23P01"), store.ErrOverlap},
		{"foreign key violation", pg("23503"), store.ErrConflict},
		{"serialization failure", pg("40001"), store.ErrRetry},
		{"deadlock", pg("40P01"), store.ErrRetry},
		{"deadlock is a conflict too", pg("40P01"), store.ErrConflict},
		{"lock not available", pg("55P03"), store.ErrConflict},
		{"statement timeout", pg("57014"), store.ErrUnavailable},
		{"connection exception", pg("08006"), store.ErrUnavailable},
		{"admin shutdown", pg("57P01"), store.ErrUnavailable},
		{"too many connections", pg("53300"), store.ErrUnavailable},
		{"deadline", context.DeadlineExceeded, store.ErrUnavailable},
		{"bad connection", fmt.Errorf("insert booking: %w", driver.ErrBadConn), store.ErrUnavailable},
		{"network", opErr, store.ErrUnavailable},
		{"other PostgreSQL error", pg("42P01"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.in)
			if tc.want == nil {
				if got != tc.in {
					t.Fatalf("translate(%v) = %v, want it unchanged", tc.in, got)
				}
				return
			}
			if !errors.Is(got, tc.want) {
				t.Fatalf("translate(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
	// Only deadlocks and serialization failures may be retried.
	for _, code := range []string{"55P03", "23503", "23505"} {
		if err := translate(pg(code)); errors.Is(err, store.ErrRetry) {
			t.Errorf("SQLSTATE %s translates to %v, a retry", code, err)
		}
	}
}

func TestRedactErr(t *testing.T) {
	for _, in := range []string{
		"failed to connect to postgres://alice:hunter2@db:5432/x",
		"cannot parse `host=db user=alice password=hunter2 dbname=x`",
	} {
		got := redactErr(errors.New(in)).Error()
		if strings.Contains(got, "hunter2") {
			t.Errorf("redactErr(%q) = %q still has the password", in, got)
		}
	}
}
