package clientaddr

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func mustPrefixes(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, bad := ParsePrefixes(s)
	if len(bad) > 0 {
		t.Fatalf("bad prefixes %v", bad)
	}
	return p
}

func TestAddr(t *testing.T) {
	r := New(mustPrefixes(t, "10.0.0.0/8, 192.0.2.7, fd00::/8"), nil)
	tests := []struct {
		name   string
		peer   string
		fwd    []string
		xff    []string
		expect string
	}{
		{name: "untrusted peer, no header", peer: "203.0.113.9:5555", expect: "203.0.113.9"},
		{name: "untrusted peer's forged XFF is ignored", peer: "203.0.113.9:5555", xff: []string{"198.51.100.1"}, expect: "203.0.113.9"},
		{name: "untrusted peer's forged Forwarded is ignored", peer: "203.0.113.9:5555", fwd: []string{"for=198.51.100.1"}, expect: "203.0.113.9"},
		{name: "trusted peer without header", peer: "10.1.2.3:80", expect: "10.1.2.3"},
		{name: "XFF one hop", peer: "10.1.2.3:80", xff: []string{"198.51.100.1"}, expect: "198.51.100.1"},
		{name: "XFF right-most untrusted wins over a forged left part", peer: "10.1.2.3:80", xff: []string{"1.1.1.1, 198.51.100.1"}, expect: "198.51.100.1"},
		{name: "XFF skips trusted hops", peer: "10.1.2.3:80", xff: []string{"1.1.1.1, 198.51.100.1, 10.9.9.9, 192.0.2.7"}, expect: "198.51.100.1"},
		{name: "XFF several lines", peer: "10.1.2.3:80", xff: []string{"1.1.1.1", "198.51.100.1"}, expect: "198.51.100.1"},
		{name: "XFF all trusted: left-most", peer: "10.1.2.3:80", xff: []string{"10.0.0.1, 10.0.0.2"}, expect: "10.0.0.1"},
		{name: "XFF with ports and brackets", peer: "10.1.2.3:80", xff: []string{"[2001:db8::1]:443"}, expect: "2001:db8::1"},
		{name: "XFF v4 with port", peer: "10.1.2.3:80", xff: []string{"198.51.100.1:8080"}, expect: "198.51.100.1"},
		{name: "XFF mapped v4", peer: "10.1.2.3:80", xff: []string{"::ffff:198.51.100.1"}, expect: "198.51.100.1"},
		{name: "IPv6 trusted peer", peer: "[fd00::1]:80", xff: []string{"198.51.100.1"}, expect: "198.51.100.1"},
		{name: "mapped trusted peer", peer: "[::ffff:10.1.2.3]:80", xff: []string{"198.51.100.1"}, expect: "198.51.100.1"},
		{name: "malformed XFF falls back to the peer", peer: "10.1.2.3:80", xff: []string{"198.51.100.1, bogus"}, expect: "10.1.2.3"},
		{name: "empty XFF entry is malformed", peer: "10.1.2.3:80", xff: []string{"198.51.100.1,,"}, expect: "10.1.2.3"},
		{name: "Forwarded simple", peer: "10.1.2.3:80", fwd: []string{"for=198.51.100.1;proto=https"}, expect: "198.51.100.1"},
		{name: "Forwarded RFC examples", peer: "10.1.2.3:80", fwd: []string{`for="_gazonk"`, `For="[2001:db8:cafe::17]:4711"`}, expect: "2001:db8:cafe::17"},
		{name: "Forwarded list", peer: "10.1.2.3:80", fwd: []string{"for=192.0.2.43, for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com"}, expect: "198.51.100.17"},
		{name: "Forwarded skips trusted", peer: "10.1.2.3:80", fwd: []string{`for=198.51.100.17, for="10.0.0.5:1234"`}, expect: "198.51.100.17"},
		{name: "Forwarded unknown stops at its reporter", peer: "10.1.2.3:80", fwd: []string{"for=unknown, for=10.0.0.5"}, expect: "10.0.0.5"},
		{name: "Forwarded without for stops at the peer", peer: "10.1.2.3:80", fwd: []string{"proto=https"}, expect: "10.1.2.3"},
		{name: "Forwarded unquoted IPv6 is malformed", peer: "10.1.2.3:80", fwd: []string{"for=[2001:db8::1]"}, expect: "10.1.2.3"},
		{name: "Forwarded repeated parameter is malformed", peer: "10.1.2.3:80", fwd: []string{"for=198.51.100.1;for=198.51.100.2"}, expect: "10.1.2.3"},
		{name: "both headers agreeing", peer: "10.1.2.3:80", fwd: []string{"for=198.51.100.1"}, xff: []string{"198.51.100.1"}, expect: "198.51.100.1"},
		{name: "client's own Forwarded behind an XFF proxy", peer: "10.1.2.3:80", fwd: []string{"for=6.6.6.6"}, xff: []string{"198.51.100.1"}, expect: "10.1.2.3"},
		{name: "unix socket peer", peer: "@", xff: []string{"198.51.100.1"}, expect: "@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = tt.peer
			for _, v := range tt.fwd {
				req.Header.Add("Forwarded", v)
			}
			for _, v := range tt.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			if got := r.Addr(req); got != tt.expect {
				t.Fatalf("Addr = %q, want %q", got, tt.expect)
			}
		})
	}
}

func TestNoTrustIgnoresHeaders(t *testing.T) {
	for _, r := range []*Resolver{nil, New(nil, nil)} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "127.0.0.1:4000"
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		req.Header.Set("Forwarded", "for=198.51.100.1")
		if got := r.Addr(req); got != "127.0.0.1" {
			t.Fatalf("Addr = %q, want the peer", got)
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	p, bad := ParsePrefixes(" 10.0.0.0/8,192.0.2.7 , ::1, 10.1.2.3/8,, nonsense, 300.1.1.1/8, fe80::1%eth0")
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "::1/128", "10.0.0.0/8"}
	if len(p) != len(want) {
		t.Fatalf("prefixes %v, want %v", p, want)
	}
	for i := range want {
		if p[i].String() != want[i] {
			t.Fatalf("prefix %d = %s, want %s", i, p[i], want[i])
		}
	}
	if strings.Join(bad, "|") != "nonsense|300.1.1.1/8|fe80::1%eth0" {
		t.Fatalf("bad = %q", bad)
	}
}

func TestMalformedLoggedOncePerMinute(t *testing.T) {
	var buf bytes.Buffer
	r := New(mustPrefixes(t, "10.0.0.0/8"), slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	send := func() string {
		req := httptest.NewRequest("GET", "/x", nil)
		req.RemoteAddr = "10.0.0.1:1"
		req.Header.Set("X-Forwarded-For", "not-an-address")
		return r.Addr(req)
	}
	for i := 0; i < 50; i++ {
		if got := send(); got != "10.0.0.1" {
			t.Fatalf("Addr = %q, want the peer", got)
		}
		now = now.Add(time.Second)
	}
	if n := strings.Count(buf.String(), "malformed forwarding header"); n != 1 {
		t.Fatalf("%d log lines in 50 s, want 1:\n%s", n, buf.String())
	}
	if strings.Contains(buf.String(), "not-an-address") {
		t.Fatal("the header's value was logged")
	}
	now = now.Add(11 * time.Second)
	send()
	if n := strings.Count(buf.String(), "malformed forwarding header"); n != 2 {
		t.Fatalf("%d log lines after a minute, want 2", n)
	}
	if !strings.Contains(buf.String(), "not_logged_since_last=49") {
		t.Fatalf("the second line does not count the 49 unlogged requests:\n%s", buf.String())
	}
}

func TestMiddlewareAndOf(t *testing.T) {
	r := New(mustPrefixes(t, "127.0.0.0/8"), nil)
	var got string
	h := r.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { got = Of(req) }))
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("X-Forwarded-For", "198.51.100.1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got != "198.51.100.1" {
		t.Fatalf("Of = %q", got)
	}
	plain := httptest.NewRequest("GET", "/", nil)
	plain.RemoteAddr = "192.0.2.1:9"
	if a := Of(plain); a != "192.0.2.1" {
		t.Fatalf("Of without middleware = %q", a)
	}
}

func TestParseForwardedLimits(t *testing.T) {
	long := strings.Repeat("for=192.0.2.1,", MaxHops+1)
	if _, err := ParseForwarded(long); err == nil {
		t.Fatal("more than MaxHops accepted")
	}
	if _, err := ParseForwarded(""); err == nil {
		t.Fatal("empty header accepted")
	}
	if _, err := ParseForwarded(`for="192.0.2.1`); err == nil {
		t.Fatal("unterminated quote accepted")
	}
	hops, err := ParseForwarded(`for="\[2001:db8::1\]";proto=https, , for=192.0.2.1`)
	if err != nil || len(hops) != 2 || hops[0].Addr.String() != "2001:db8::1" {
		t.Fatalf("hops %v, err %v", hops, err)
	}
}
