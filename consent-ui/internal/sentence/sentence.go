// Package sentence turns an error message written for people ("email is
// already registered") into a sentence a page can show ("Email is already
// registered."). The sign-in, sign-up and account pages and the admin
// pages share it.
package sentence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Of returns msg with its first letter in upper case and a full stop at
// the end, unless it already ends with ".", "!" or "?".
func Of(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	return msg
}
