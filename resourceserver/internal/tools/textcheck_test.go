package tools

import "testing"

func TestCheckControlChars(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  map[string]any
		field string // "" = accepted
	}{
		{"clean", map[string]any{"query": "hair", "notes": "two\nlines\tand a tab"}, ""},
		{"NUL in a reference", map[string]any{"business_reference": "biz-\x00"}, "business_reference"},
		{"NUL in free text", map[string]any{"notes": "a\x00b"}, "notes"},
		{"line break in a reference", map[string]any{"booking_reference": "bk\n1"}, "booking_reference"},
		{"escape in free text", map[string]any{"reason": "a\x1b[31m"}, "reason"},
		{"first field by name", map[string]any{"zeta": "\x01", "city": "\x02"}, "city"},
		{"nested", map[string]any{"extra": []any{map[string]any{"k": "\x00"}}}, "extra"},
		{"DEL in free text", map[string]any{"notes": "a\x7fb"}, "notes"},
		{"C1 control in free text", map[string]any{"notes": "a\u0085b"}, "notes"},
		{"right-to-left override in a summary echo", map[string]any{"confirmed_summary": "Book \u202eevil"}, "confirmed_summary"},
		{"isolate in a query", map[string]any{"query": "hair\u2066"}, "query"},
		{"not UTF-8 in free text", map[string]any{"reason": "caf\xe9"}, "reason"},
		{"numbers and booleans", map[string]any{"limit": 5.0, "confirmation_obtained": true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := checkControlChars(c.args)
			switch {
			case c.field == "" && te != nil:
				t.Errorf("refused: %+v", te)
			case c.field != "" && (te == nil || te.Code != "invalid_argument" || te.Field != c.field):
				t.Errorf("answer %+v, want invalid_argument on %s", te, c.field)
			}
		})
	}
}
