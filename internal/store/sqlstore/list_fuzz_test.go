package sqlstore

import (
	"encoding/json"
	"reflect"
	"testing"
)

// listCases are list columns as the product writes them and as it never
// does: escapes, whitespace, wrong types, broken arrays.
var listCases = []string{
	`[]`, `[""]`, `["openid"]`, `["openid","offline_access","bookings:read"]`,
	`["http://127.0.0.1:41234/callback","https://claude.ai/api/mcp/auth_callback"]`,
	`["a\"b"]`, `["a\\b"]`, `["\u003cx\u003e"]`, `["é","日本"]`, "[\"\xff\"]", "[\"a\tb\"]",
	`[ "a" ]`, `["a", "b"]`, `["a",]`, `[,"a"]`, `["a""b"]`, `["a",1]`, `[1]`, `[null]`, `null`,
	`{}`, `"a"`, `[`, `]`, `["a"`, `"a"]`, ``, `["a"]x`, `[["a"]]`, `[",",","]`, `[","]`,
}

// decodeListJSON is what encoding/json alone answers for s.
func decodeListJSON(s string) []string {
	var l []string
	_ = json.Unmarshal([]byte(s), &l)
	if l == nil {
		l = []string{}
	}
	return l
}

func TestDecodeListAsEncodingJSON(t *testing.T) {
	for _, s := range listCases {
		if got, want := decodeList(s), decodeListJSON(s); !reflect.DeepEqual(got, want) {
			t.Errorf("decodeList(%q) = %q, encoding/json answers %q", s, got, want)
		}
	}
	// What encodeList writes comes back unchanged, escapes or not.
	for _, l := range [][]string{{}, {"openid", "bookings:write"}, {`a"b`, `<&>`, "\u2028", "x\\y"}} {
		if got := decodeList(encodeList(l)); !reflect.DeepEqual(got, l) {
			t.Errorf("decodeList(encodeList(%q)) = %q", l, got)
		}
	}
	if _, ok := splitList(`["openid","offline_access"]`); !ok {
		t.Error("a plain list went to the JSON decoder")
	}
}

func FuzzDecodeList(f *testing.F) {
	for _, s := range listCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := decodeList(s), decodeListJSON(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeList(%q) = %q, encoding/json answers %q", s, got, want)
		}
	})
}

func BenchmarkDecodeList(b *testing.B) {
	const redirects = `["http://127.0.0.1:41234/callback","https://claude.ai/api/mcp/auth_callback"]`
	b.Run("split", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeList(redirects)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeListJSON(redirects)
		}
	})
}
