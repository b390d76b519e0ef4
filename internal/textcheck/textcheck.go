// Package textcheck is the one rule for text a client sent: names, notes,
// reasons, policy texts, form fields and the MCP tools' arguments
// (docs/reference.md §4).
//
// Control returns the first character that has no business in stored
// text: C0 control characters (U+0000–U+001F; tab, CR and LF are allowed
// in multi-line text), DEL (U+007F), C1 controls (U+0080–U+009F), the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), which make a name reorder what follows it, and bytes
// that are not UTF-8. NUL cannot be stored in PostgreSQL text at all
// (SQLSTATE 22021) while SQLite stores it: refusing it at the edge makes
// both backends answer the same, with an error naming the field.
//
// Text applies Control, a length limit in characters and NFC
// normalisation, so that two spellings of the same accented name are
// stored as one.
package textcheck

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The length limits, in characters, docs/reference.md §4 states.
const (
	// NameMax bounds names: businesses, services, staff, categories,
	// cities, addresses, OAuth client names, display names.
	NameMax = 200
	// NoteMax bounds booking notes and cancellation reasons.
	NoteMax = 500
	// PolicyMax bounds descriptions and policy texts (cancellation
	// policy, privacy notice).
	PolicyMax = 2000
)

// Forbidden reports whether r is refused in text; with multiline, tab, CR
// and LF are allowed.
func Forbidden(r rune, multiline bool) bool {
	switch {
	case r < 0x20:
		return !(multiline && (r == '\t' || r == '\n' || r == '\r'))
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Control returns the first refused character of s (see Forbidden); a
// byte that is not UTF-8 is returned as U+FFFD.
func Control(s string, multiline bool) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return r, true
			}
			continue // a genuine U+FFFD in the text
		}
		if Forbidden(r, multiline) {
			return r, true
		}
	}
	return 0, false
}

// Describe names a refused character for an error message: "a NUL
// character (U+0000)", "the control character U+001B".
func Describe(r rune) string {
	switch {
	case r == 0:
		return "a NUL character (U+0000)"
	case r == utf8.RuneError:
		return "bytes that are not UTF-8"
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return fmt.Sprintf("the bidirectional control character U+%04X", r)
	}
	return fmt.Sprintf("the control character U+%04X", r)
}

// Text checks s against the rule and returns it NFC-normalised. The error
// is a sentence fragment to follow the field's name ("contains a NUL
// character (U+0000); remove it", "is 250 characters long; at most 200
// are accepted"). max 0 means no length limit.
func Text(s string, max int, multiline bool) (string, error) {
	if r, bad := Control(s, multiline); bad {
		allowed := ""
		if multiline {
			allowed = " (tabs and line breaks are fine)"
		}
		return "", fmt.Errorf("contains %s, which Linkslot does not accept; remove it%s", Describe(r), allowed)
	}
	s = norm.NFC.String(s)
	if n := utf8.RuneCountInString(s); max > 0 && n > max {
		return "", fmt.Errorf("is %d characters long; at most %d are accepted", n, max)
	}
	return s, nil
}

// Visible reports whether s holds at least one character that shows: a
// letter, mark, number, punctuation or symbol. Spaces, format characters
// (zero-width space, joiners, soft hyphen) and controls do not count.
func Visible(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) {
			return true
		}
	}
	return false
}

// Form returns the first field (in name order) of form whose name or one
// of whose values holds a refused character. Fields named in multiline
// may carry tab, CR and LF. Password fields are not checked: they are
// hashed, never stored as text, and may be whatever the person chose.
func Form(form url.Values, multiline ...string) (field string, bad rune, found bool) {
	names := make([]string, 0, len(form))
	for k := range form {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if r, ok := Control(k, false); ok {
			return k, r, true
		}
		if strings.Contains(k, "password") {
			continue
		}
		ml := slices.Contains(multiline, k)
		for _, v := range form[k] {
			if r, ok := Control(v, ml); ok {
				return k, r, true
			}
		}
	}
	return "", 0, false
}
