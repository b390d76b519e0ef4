// Package textcheck finds control characters in text a client sent: the
// one rule the MCP tools' arguments and the pages' forms share.
//
// C0 control characters (U+0000–U+001F) have no business in references,
// e-mail addresses or names, and NUL cannot be stored in PostgreSQL text
// at all (SQLSTATE 22021) while SQLite stores it: refusing them at the
// edge makes both backends answer the same, with an error naming the
// field. Free text (notes, reasons, multi-line form fields) may carry tab,
// CR and LF.
package textcheck

import (
	"net/url"
	"slices"
	"strings"
)

// Control returns the first C0 control character of s; with multiline,
// tab, CR and LF are allowed.
func Control(s string, multiline bool) (rune, bool) {
	for _, r := range s {
		if r < 0x20 && !(multiline && (r == '\t' || r == '\n' || r == '\r')) {
			return r, true
		}
	}
	return 0, false
}

// Form returns the first field (in name order) of form whose name or one
// of whose values holds a control character. Fields named in multiline
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
