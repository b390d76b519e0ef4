package booking

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// offsetSuffix is the zone designator every accepted instant must end with.
var offsetSuffix = regexp.MustCompile(`(?:[Zz]|[+-]\d{2}:\d{2})$`)

// strictShape is RFC 3339's date-time (§5.6): two-digit fields, a
// four-digit year.
var strictShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$`)

// letters finds natural-language words (two letters in a row never occur in
// an RFC 3339 instant, whose only letters are the T and Z designators).
var letters = regexp.MustCompile(`[A-Za-z]{2}`)

// FuzzParseInstant: an accepted instant is in UTC, names its offset, and
// round-trips (formatting it and parsing again gives the same instant, which
// is also the instant the input itself denotes, to the microsecond); anything refused is
// invalid_time naming the field; local times without an offset and natural
// language are always refused.
func FuzzParseInstant(f *testing.F) {
	for _, s := range []string{
		"2026-03-10T09:30:00-04:00", " 2026-03-10T13:30:00Z ", "2026-03-10T13:30:00.000+00:00",
		"2026-03-10T09:30:00", "2026-03-10 09:30", "tomorrow at 9", "", "2026-03-10T09:30:00+14:00",
		"2026-02-30T09:30:00Z", "2026-03-10T24:00:00Z", "2026-03-10T09:30:00.123456789-11:59", "next monday 10am",
		"2026-03-10T09:30Z", "2026-03-10t09:30:00z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999+23:59",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseInstant("starts_at", s)
		if err != nil {
			e, ok := AsError(err)
			if !ok || e.Code != problem.CodeInvalidTime || e.Field != "starts_at" {
				t.Fatalf("ParseInstant(%q) error %v; want invalid_time on starts_at", s, err)
			}
			return
		}
		trimmed := strings.TrimSpace(s)
		if got.Location() != time.UTC {
			t.Fatalf("ParseInstant(%q) = %v, not in UTC", s, got)
		}
		if !offsetSuffix.MatchString(trimmed) {
			t.Fatalf("ParseInstant(%q) accepted a time without an offset: %v", s, got)
		}
		if !strictShape.MatchString(trimmed) || got.IsZero() || got.Year() > 9999 {
			t.Fatalf("ParseInstant(%q) = %v: not an RFC 3339 date-time or not printable", s, got)
		}
		if letters.MatchString(trimmed) {
			t.Fatalf("ParseInstant(%q) accepted words: %v", s, got)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.999999999", trimmed); err == nil {
			t.Fatalf("ParseInstant(%q) accepted a local time without offset", s)
		}
		// The instant the input denotes, at the store's microsecond precision.
		direct, err := time.Parse(time.RFC3339Nano, trimmed)
		if err != nil || !store.UTC(direct).Equal(got) {
			t.Fatalf("ParseInstant(%q) = %v; the input denotes %v (%v)", s, got, direct, err)
		}
		again, err := ParseInstant("starts_at", got.Format(time.RFC3339Nano))
		if err != nil || !again.Equal(got) || again.Location() != time.UTC {
			t.Fatalf("ParseInstant(%q) = %v does not round-trip: %v, %v", s, got, again, err)
		}
		// With the offset it was given, it prints back as the same instant.
		if back, err := ParseInstant("starts_at", direct.Format(time.RFC3339Nano)); err != nil || !back.Equal(got) {
			t.Fatalf("ParseInstant(%q): %s reads back as %v, %v", s, direct.Format(time.RFC3339Nano), back, err)
		}
	})
}

// FuzzParseDate: the local date of availability queries is strictly
// YYYY-MM-DD: an accepted date prints back as exactly the input and names a
// real calendar day whose next day is one calendar day later; everything
// else (natural language, times, other layouts) is refused.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-03-14", "2028-02-29", "2026-02-29", "2026-13-01", "2026-3-4", "tomorrow", "",
		"2026-03-14T00:00:00Z", "14/03/2026", "+2026-03-14", "0000-01-01", "9999-12-31", " 2026-03-14", "2026-03-14\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseDate(s)
		if !ok {
			if tm, err := time.Parse("2006-01-02", s); err == nil {
				t.Fatalf("parseDate(%q) refused the date %v", s, tm)
			}
			return
		}
		if d.String() != s {
			t.Fatalf("parseDate(%q) = %s; not the same date", s, d)
		}
		if letters.MatchString(s) || strings.ContainsAny(s, " T:") {
			t.Fatalf("parseDate(%q) accepted more than a date", s)
		}
		civil := time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC)
		if dateOf(civil) != d {
			t.Fatalf("parseDate(%q) = %+v is not a real calendar day", s, d)
		}
		if n := d.next(); n != dateOf(civil.AddDate(0, 0, 1)) {
			t.Fatalf("parseDate(%q).next() = %s", s, n)
		}
		if d.weekday() != civil.Weekday() {
			t.Fatalf("parseDate(%q).weekday() = %v; want %v", s, d.weekday(), civil.Weekday())
		}
	})
}
