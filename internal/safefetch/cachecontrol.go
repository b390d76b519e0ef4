package safefetch

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CacheTTL is how long a response with header h may be reused, bounded to
// [min, max]: Cache-Control max-age (s-maxage is for shared caches and
// ignored), else Expires minus Date (or now), else min. no-store and
// no-cache mean min: docs/reference.md §10 caches at least that long, so a client
// cannot make Linkslot fetch its document on every request.
func CacheTTL(h http.Header, now time.Time, min, max time.Duration) time.Duration {
	ttl, ok := maxAge(h.Values("Cache-Control"))
	if !ok {
		if exp := h.Get("Expires"); exp != "" {
			if t, err := http.ParseTime(exp); err == nil {
				base := now
				if d, err := http.ParseTime(h.Get("Date")); err == nil {
					base = d
				}
				ttl, ok = t.Sub(base), true
			} else {
				ttl, ok = 0, true // an invalid Expires means already expired (RFC 9111 §5.3)
			}
		}
	}
	if !ok || ttl < min {
		return min
	}
	if ttl > max {
		return max
	}
	return ttl
}

// maxAge reads max-age from Cache-Control values; no-store and no-cache
// count as zero.
func maxAge(values []string) (time.Duration, bool) {
	var (
		age   time.Duration
		found bool
	)
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(arg), `"`), 10, 64)
				if err != nil || n < 0 {
					continue
				}
				if n > int64(1<<62/time.Second) {
					n = int64(1 << 62 / time.Second)
				}
				if !found {
					age, found = time.Duration(n)*time.Second, true
				}
			}
		}
	}
	return age, found
}
