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
	} {
		err := CheckText("notes", c.v)
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if e, _ := AsError(err); !c.ok && (e == nil || e.Code != problem.CodeInvalidArgument || e.Field != "notes" || e.Message == "") {
			t.Errorf("%s: %+v, want invalid_argument on notes", c.name, e)
		}
	}
}
