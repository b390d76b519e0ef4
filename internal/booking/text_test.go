package booking

import (
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/problem"
)

// TestCheckText: the free-text rule counts characters, not bytes, and
// refuses text that is not valid UTF-8, naming the field.
func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		name, v string
		ok      bool
	}{
		{"empty", "", true},
		{"at the limit in two-byte characters", strings.Repeat("é", MaxNotes), true},
		{"one over", strings.Repeat("é", MaxNotes+1), false},
		{"not UTF-8", "caf\xe9", false},
		{"a NUL", "Table by the window\x00", false},
		{"a terminal escape", "\x1b]8;;https://evil.example\x1b\\", false},
		{"a C1 control", "next\u0085line", false},
		{"a right-to-left override", "\u202eevil", false},
		{"lines from a textarea", "Line one\r\nLine two\tend", true},
	} {
		_, err := CheckText("notes", c.v)
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if e, _ := AsError(err); !c.ok && (e == nil || e.Code != problem.CodeInvalidArgument || e.Field != "notes" || e.Message == "") {
			t.Errorf("%s: %+v, want invalid_argument on notes", c.name, e)
		}
	}
}

// TestCheckTextNFC: notes are stored in NFC.
func TestCheckTextNFC(t *testing.T) {
	if got, err := CheckText("notes", "Cafe\u0301"); err != nil || got != "Caf\u00e9" {
		t.Errorf("CheckText = %q, %v; want the NFC form", got, err)
	}
}
