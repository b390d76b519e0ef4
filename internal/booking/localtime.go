package booking

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// date is a civil date in a business's zone.
type date struct {
	y int
	m time.Month
	d int
}

func (d date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.y, d.m, d.d) }

// next returns the following calendar date (never +24h).
func (d date) next() date {
	t := time.Date(d.y, d.m, d.d+1, 12, 0, 0, 0, time.UTC)
	return date{t.Year(), t.Month(), t.Day()}
}

// weekday is the civil weekday of the date, whatever the zone.
func (d date) weekday() time.Weekday {
	return time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC).Weekday()
}

func dateOf(t time.Time) date { return date{t.Year(), t.Month(), t.Day()} }

// parseDate reads YYYY-MM-DD strictly.
func parseDate(s string) (date, bool) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return date{}, false
	}
	return dateOf(t), true
}

// resolveLocal turns a local wall-clock time (a date and minutes after its
// midnight, 0..1440) into an instant in loc, with the package's one rule:
//
//   - a time that exists once is that instant;
//   - a time repeated by a backward DST change is its FIRST occurrence;
//   - a time skipped by a forward DST change does not exist: ok is false and
//     the instant returned is the end of the gap (the transition), which is
//     what a window bound falling in the gap means.
//
// It does not rely on time.Date's unspecified choice for such times.
func resolveLocal(loc *time.Location, d date, minute int) (t time.Time, ok bool) {
	naive := time.Date(d.y, d.m, d.d, 0, 0, 0, 0, time.UTC).Add(time.Duration(minute) * time.Minute)
	// The offsets in effect shortly before and after; any transition of a
	// real zone near this wall time lies between them.
	_, offA := naive.Add(-36 * time.Hour).In(loc).Zone()
	_, offB := naive.Add(36 * time.Hour).In(loc).Zone()
	found := false
	for _, off := range [...]int{offA, offB} {
		c := naive.Add(-time.Duration(off) * time.Second)
		if _, o := c.In(loc).Zone(); o != off {
			continue
		}
		if !found || c.Before(t) {
			t, found = c, true
		}
	}
	if found {
		return t.In(loc), true
	}
	// In a gap: read with the earlier offset, the instant lies after the
	// transition; the zone in effect there starts at the transition.
	x := naive.Add(-time.Duration(offA) * time.Second).In(loc)
	start, _ := x.ZoneBounds()
	if start.IsZero() || start.After(x) {
		start = x
	}
	return start.In(loc), false
}

// dayResolver returns resolveLocal for one date, with a fast path for the
// (usual) day on which the zone's offset does not change: then every local
// minute is midnight plus that many minutes.
func dayResolver(loc *time.Location, d date) func(minute int) (time.Time, bool) {
	start, ok0 := resolveLocal(loc, d, 0)
	end, ok1 := resolveLocal(loc, d.next(), 0)
	_, off := start.Zone()
	_, offEnd := end.Zone()
	zs, ze := start.ZoneBounds()
	if ok0 && ok1 && off == offEnd && !zs.After(start) && (ze.IsZero() || !ze.Before(end)) {
		return func(minute int) (time.Time, bool) {
			return start.Add(time.Duration(minute) * time.Minute), true
		}
	}
	return func(minute int) (time.Time, bool) { return resolveLocal(loc, d, minute) }
}

// rfc3339RE is the shape of an RFC 3339 date-time (§5.6), fraction and
// offset included.
var rfc3339RE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$`)

// ParseInstant reads an exact RFC 3339 instant with its offset (as every
// availability answer prints them). Anything else, natural language or a
// local time without offset included, answers invalid_time naming field.
func ParseInstant(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	// time.Parse alone also takes one-digit hours ("T9:30:00Z"), and an
	// offset can carry a 9999 date past the last instant RFC 3339 (and JSON)
	// can print.
	u := store.UTC(t)
	if err != nil || !rfc3339RE.MatchString(s) || u.IsZero() || u.Year() < 1 || u.Year() > 9999 {
		return time.Time{}, fieldErr(problem.CodeInvalidTime, field, "%s must be an exact RFC 3339 instant with its offset, such as 2026-03-10T09:30:00-04:00, copied from an availability answer; natural language and times without an offset are not accepted.", field)
	}
	return u, nil
}
