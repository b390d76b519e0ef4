package textout

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"Claude\x1b[2J": `Claude\x1b[2J`, "a\u202eb\u2066c": "aU+202EbU+2066c", "a\r\n\tb": `a\r\n\tb`,
		"\x00\x7f\u009b": `\x00\x7f\u009b`, `a\b`: `a\\b`, "bad\xff": `bad\xff`, "Zoë 中": "Zoë 中",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	if got := VisibleLines("a\tb\n\x1b\\"); got != "a\tb\n\\x1b\\" {
		t.Errorf("VisibleLines = %q", got)
	}
	if got := StripBidi("Claude\u202emoc.tfosorcim\u202c\u2067x\u2069"); got != "Claudemoc.tfosorcimx" {
		t.Errorf("StripBidi = %q", got)
	}
}

// FuzzWriters: whatever the text, Lines holds no CR and no control
// character but tab and LF, OneLine no line break at all, Visible nothing
// a terminal acts on, StripBidi no bidi control.
func FuzzWriters(f *testing.F) {
	f.Add("a\r\nb\rc\nd\u0085e\u2028\x00\x1b[2J\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Lines(s) {
			if r != '\t' && r != '\n' && control(r) {
				t.Fatalf("Lines(%q) holds %U", s, r)
			}
		}
		if o := OneLine(s); strings.ContainsAny(o, "\r\n\t") || !utf8.ValidString(o) {
			t.Fatalf("OneLine(%q) = %q", s, o)
		}
		for _, r := range Visible(s) {
			if control(r) || Bidi(r) {
				t.Fatalf("Visible(%q) holds %U", s, r)
			}
		}
		for _, r := range StripBidi(s) {
			if Bidi(r) {
				t.Fatalf("StripBidi(%q) holds %U", s, r)
			}
		}
	})
}
