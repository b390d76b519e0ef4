package textcheck

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestControl(t *testing.T) {
	for _, c := range []struct {
		s         string
		multiline bool
		want      rune
		found     bool
	}{
		{"plain text é ✓ \uFFFD", false, 0, false},
		{"a\x00b", false, 0, true},
		{"a\x00b", true, 0, true},
		{"a\tb", false, '\t', true},
		{"a\tb\r\nc", true, 0, false},
		{"a\x1bb", true, 0x1b, true},
		{"a\x7fb", true, 0x7f, true},             // DEL
		{"a\u0085b", true, 0x85, true},           // C1 next line
		{"Claude\u202Emoc", false, 0x202e, true}, // right-to-left override
		{"x\u2067y", false, 0x2067, true},        // right-to-left isolate
		{"a\xffb", false, utf8.RuneError, true},
	} {
		r, ok := Control(c.s, c.multiline)
		if ok != c.found || r != c.want {
			t.Errorf("Control(%q, %v) = %U, %v; want %U, %v", c.s, c.multiline, r, ok, c.want, c.found)
		}
	}
}

func TestText(t *testing.T) {
	decomposed := "Cafe\u0301" // e + combining acute
	got, err := Text(decomposed, NameMax, false)
	if err != nil || got != "Café" {
		t.Errorf("Text(%q) = %q, %v; want the NFC form Café", decomposed, got, err)
	}
	if _, err := Text("Bistro\x00", NameMax, false); err == nil || !strings.Contains(err.Error(), "U+0000") {
		t.Errorf("a NUL was accepted or not named: %v", err)
	}
	if _, err := Text(strings.Repeat("é", NameMax), NameMax, false); err != nil {
		t.Errorf("a name of exactly %d characters was refused: %v", NameMax, err)
	}
	if _, err := Text(strings.Repeat("x", NameMax+1), NameMax, false); err == nil || !strings.Contains(err.Error(), "at most 200") {
		t.Errorf("a name over the limit was accepted or the limit not named: %v", err)
	}
	if _, err := Text("line one\r\nline two", NoteMax, true); err != nil {
		t.Errorf("a multi-line note was refused: %v", err)
	}
}

func TestVisible(t *testing.T) {
	for s, want := range map[string]bool{"": false, "\u200b": false, " \u00ad\u2060\ufeff\t": false, "I agree": true, "✓": true, "。": true} {
		if Visible(s) != want {
			t.Errorf("Visible(%q) = %v, want %v", s, !want, want)
		}
	}
}

func TestForm(t *testing.T) {
	f := url.Values{"email": {"a@b.example"}, "notes": {"line\nline"}, "password": {"x\x00y"}}
	if k, _, ok := Form(f, "notes"); ok {
		t.Errorf("clean form refused at %q", k)
	}
	f.Set("name", "x\x00")
	if k, r, ok := Form(f, "notes"); !ok || k != "name" || r != 0 {
		t.Errorf("Form = %q, %U, %v; want name, U+0000", k, r, ok)
	}
	if k, _, ok := Form(url.Values{"notes": {"a\nb"}}); !ok || k != "notes" {
		t.Errorf("a line break outside multiline fields was accepted (%q)", k)
	}
}

// FuzzText checks the rule's promise on arbitrary input: whatever Text
// accepts is valid UTF-8, NFC, within the limit, and free of every
// refused character; whatever it refuses, it says why.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "Café", "Cafe\u0301", "a\x00b", "a\r\nb", "\u202eabc", "\u0085", "\xff", "\u200b", strings.Repeat("x", 210)} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, multiline bool) {
		got, err := Text(s, NameMax, multiline)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Text(%q) refused without a reason", s)
			}
			return
		}
		if !utf8.ValidString(got) || !norm.NFC.IsNormalString(got) {
			t.Fatalf("Text(%q) = %q: not valid NFC UTF-8", s, got)
		}
		if utf8.RuneCountInString(got) > NameMax {
			t.Fatalf("Text(%q) = %d characters, over %d", s, utf8.RuneCountInString(got), NameMax)
		}
		for _, r := range got {
			if Forbidden(r, multiline) {
				t.Fatalf("Text(%q) = %q keeps the refused %U", s, got, r)
			}
		}
	})
}
