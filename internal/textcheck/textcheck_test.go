package textcheck

import (
	"net/url"
	"testing"
)

func TestControl(t *testing.T) {
	for _, c := range []struct {
		s         string
		multiline bool
		want      rune
		found     bool
	}{
		{"plain text é ✓", false, 0, false},
		{"a\x00b", false, 0, true},
		{"a\x00b", true, 0, true},
		{"a\tb", false, '\t', true},
		{"a\tb\r\nc", true, 0, false},
		{"a\x1bb", true, 0x1b, true},
		{"a\x7fb", false, 0, false}, // DEL is not C0
	} {
		r, ok := Control(c.s, c.multiline)
		if ok != c.found || r != c.want {
			t.Errorf("Control(%q, %v) = %U, %v; want %U, %v", c.s, c.multiline, r, ok, c.want, c.found)
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
