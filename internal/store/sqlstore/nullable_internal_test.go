package sqlstore

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestNullableScan holds the by-value nullable columns to what each driver
// hands them: pgx's own values, database/sql's from pgx in a transaction
// (string, bool, time.Time), SQLite's (its booleans are integers, its text
// may be bytes), and NULL.
func TestNullableScan(t *testing.T) {
	at := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)

	var s nullString
	for _, src := range []any{"café", []byte("café")} {
		if err := s.Scan(src); err != nil || !s.Valid || s.V != "café" {
			t.Errorf("nullString.Scan(%T) = %+v, %v", src, s, err)
		}
	}
	if err := s.ScanText(pgtype.Text{String: "x", Valid: true}); err != nil || s.V != "x" || !s.Valid {
		t.Errorf("nullString.ScanText = %+v, %v", s, err)
	}
	if err := s.Scan(nil); err != nil || s.Valid || s.V != "" {
		t.Errorf("nullString.Scan(nil) = %+v, %v", s, err)
	}

	var b nullBool
	for _, src := range []any{true, int64(1)} {
		if err := b.Scan(src); err != nil || !b.V || !b.Valid {
			t.Errorf("nullBool.Scan(%T) = %+v, %v", src, b, err)
		}
	}
	if err := b.Scan(int64(0)); err != nil || b.V || !b.Valid {
		t.Errorf("nullBool.Scan(0) = %+v, %v", b, err)
	}
	if err := b.Scan(nil); err != nil || b.Valid {
		t.Errorf("nullBool.Scan(nil) = %+v, %v", b, err)
	}
	if err := b.ScanBool(pgtype.Bool{Bool: true, Valid: true}); err != nil || !b.V || !b.Valid {
		t.Errorf("nullBool.ScanBool = %+v, %v", b, err)
	}
	if err := b.Scan("maybe"); err == nil {
		t.Errorf("nullBool.Scan(\"maybe\") = %+v, want an error", b)
	}

	var tm nullTime
	if err := tm.Scan(at); err != nil || !tm.Valid || !tm.V.Equal(at) {
		t.Errorf("nullTime.Scan(time) = %+v, %v", tm, err)
	}
	if err := tm.Scan(nil); err != nil || tm.Valid || !tm.V.IsZero() {
		t.Errorf("nullTime.Scan(nil) = %+v, %v", tm, err)
	}
	if err := tm.ScanTimestamptz(pgtype.Timestamptz{Time: at, Valid: true}); err != nil || !tm.Valid || !tm.V.Equal(at) {
		t.Errorf("nullTime.ScanTimestamptz = %+v, %v", tm, err)
	}
	if err := tm.ScanTimestamptz(pgtype.Timestamptz{Valid: true, InfinityModifier: pgtype.Infinity}); err == nil {
		t.Errorf("nullTime.ScanTimestamptz(infinity) = %+v, want an error", tm)
	}
}
