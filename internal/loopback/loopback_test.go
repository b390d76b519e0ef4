package loopback_test

import (
	"testing"

	"github.com/linkslot/linkslot/internal/loopback"
)

func TestHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "0:0:0:0:0:0:0:1": true,
		"": false, "localhost.": false, "localhost.example": false, "127.0.0.1.nip.io": false, "128.0.0.1": false,
		"::": false, "0.0.0.0": false, "10.0.0.1": false, "example.com": false, "[::1": false, "127.0.0.1:80": false,
	} {
		if got := loopback.Host(h); got != want {
			t.Errorf("Host(%q) = %v, want %v", h, got, want)
		}
	}
	for hp, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:443": true, "localhost:1": true, "localhost": true, "[::1]": true,
		"example.com:80": false, "evil.example": false,
	} {
		if got := loopback.HostPort(hp); got != want {
			t.Errorf("HostPort(%q) = %v, want %v", hp, got, want)
		}
	}
}

func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1", "[::1]", "::ffff:127.0.0.1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if loopback.Host(h) && !loopback.HostPort(h) {
			t.Fatalf("Host(%q) but not HostPort", h)
		}
	})
}
