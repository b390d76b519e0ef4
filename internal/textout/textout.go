// Package textout is the one text discipline for what Linkslot writes:
// calendar objects, e-mail, terminal tables and pages (docs/reference.md
// §11, §6, §10). Package textcheck refuses bad text at the door; textout
// makes whatever text reaches a writer safe for its format anyway, so a
// name or a note can neither start a line of its own, nor move the
// terminal's cursor, nor reorder what follows it on a page.
package textout

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// control reports C0 (tab included), DEL and C1.
func control(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// Bidi reports the bidirectional embedding, override and isolate controls
// (U+202A–U+202E, U+2066–U+2069), which make a name reorder the text that
// follows it.
func Bidi(r rune) bool { return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) }

// Lines is s as lines of text: every line break (CRLF, bare CR, bare LF,
// NEL, U+2028, U+2029) becomes one LF, every other control character but
// HTAB is removed, and invalid UTF-8 becomes U+FFFD.
func Lines(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
			b.WriteByte('\n')
		case r == '\n':
			if i == 0 || s[i-1] != '\r' {
				b.WriteByte('\n')
			}
		case r == '\t':
			b.WriteByte('\t')
		case control(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// OneLine is Lines on one line: runs of white space, line breaks
// included, become one space, and none leads or trails.
func OneLine(s string) string { return strings.Join(strings.Fields(Lines(s)), " ") }

// Visible is s as a terminal may show it: control characters as Go
// escapes (\x1b, \r, \x00, \u009b), bidi controls as U+202E, invalid UTF-8
// as \xff, and a backslash doubled, so what is printed is what is stored
// and nothing reaches the terminal as a command.
func Visible(s string) string { return visible(s, false) }

// VisibleLines is Visible keeping tabs, line feeds and backslashes as they
// are: for output whose structure they are (a table tabwriter aligned),
// and whose free text went through Visible already.
func VisibleLines(s string) string { return visible(s, true) }

func visible(s string, keep bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case keep && (r == '\t' || r == '\n'):
			b.WriteRune(r)
		case r == '\\' && !keep:
			b.WriteString(`\\`)
		case r == 0xfffd && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && control(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case Bidi(r):
			fmt.Fprintf(&b, "U+%04X", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// StripBidi is s without its bidi controls (Bidi), for the names a
// consent page shows.
func StripBidi(s string) string {
	return strings.Map(func(r rune) rune {
		if Bidi(r) {
			return -1
		}
		return r
	}, s)
}
