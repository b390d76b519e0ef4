package safefetch_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/safefetch"
)

func TestCacheTTL(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	min, max := 5*time.Minute, 24*time.Hour
	for _, c := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, min},
		{"max-age", http.Header{"Cache-Control": {"public, max-age=3600"}}, time.Hour},
		{"quoted", http.Header{"Cache-Control": {`max-age="600"`}}, 10 * time.Minute},
		{"below min", http.Header{"Cache-Control": {"max-age=1"}}, min},
		{"above max", http.Header{"Cache-Control": {"max-age=99999999999999999"}}, max},
		{"no-store", http.Header{"Cache-Control": {"no-store"}}, min},
		{"no-cache wins", http.Header{"Cache-Control": {"max-age=3600", "no-cache"}}, min},
		{"bad max-age", http.Header{"Cache-Control": {"max-age=abc"}}, min},
		{"expires", http.Header{"Expires": {now.Add(2 * time.Hour).Format(http.TimeFormat)}}, 2 * time.Hour},
		{"expires with date", http.Header{
			"Expires": {now.Add(3 * time.Hour).Format(http.TimeFormat)},
			"Date":    {now.Add(time.Hour).Format(http.TimeFormat)},
		}, 2 * time.Hour},
		{"max-age beats expires", http.Header{
			"Cache-Control": {"max-age=1800"},
			"Expires":       {now.Add(5 * time.Hour).Format(http.TimeFormat)},
		}, 30 * time.Minute},
		{"invalid expires", http.Header{"Expires": {"0"}}, min},
	} {
		if got := safefetch.CacheTTL(c.h, now, min, max); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzCacheTTL(f *testing.F) {
	for _, s := range []string{"max-age=60", "no-store", "public, max-age=3600, s-maxage=10", `max-age="x"`, "max-age=-1", ",,,="} {
		f.Add(s, "Tue, 01 Dec 2026 12:00:00 GMT")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, cc, exp string) {
		got := safefetch.CacheTTL(http.Header{"Cache-Control": {cc}, "Expires": {exp}}, now, 5*time.Minute, 24*time.Hour)
		if got < 5*time.Minute || got > 24*time.Hour {
			t.Fatalf("CacheTTL(%q, %q) = %v, outside the bounds", cc, exp, got)
		}
	})
}
