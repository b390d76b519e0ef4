package mail

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// headerLines checks raw the way RFC 5322 §2.1.1 bounds it: every header
// line at most 998 octets and ending in CRLF, no bare CR or LF, and returns
// the Subject decoded with mime.WordDecoder.
func headerLines(t testing.TB, raw []byte) string {
	t.Helper()
	head, _, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatal("no blank line after the header")
	}
	for _, l := range strings.Split(string(head), "\r\n") {
		if len(l) > 998 {
			t.Fatalf("header line of %d octets: %.80q…", len(l), l)
		}
		if strings.ContainsAny(l, "\r\n\x00") {
			t.Fatalf("bare CR, LF or NUL in header line %q", l)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail refuses the message: %v", err)
	}
	subj, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("Subject %q: %v", m.Header.Get("Subject"), err)
	}
	if m.Header.Get("X-Injected") != "" || len(m.Header["Subject"]) != 1 {
		t.Fatalf("header injected: %v", m.Header)
	}
	return subj
}

func compose(t testing.TB, subject string) []byte {
	t.Helper()
	raw, err := Composer{From: DefaultFrom("auth.example"), Host: "auth.example"}.Bytes(Message{ID: "msg_1",
		To: "pat@example.com", Subject: subject, Text: "Hello\r\nthere\rand\nhere", Date: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestSubjectOfAHundredThousandCharacters(t *testing.T) {
	name := strings.Repeat("Ünïcødé business ", 100_000/17)
	subj := headerLines(t, compose(t, "Booked: Classic cut at "+name+", Fri 6 Mar 10:00"))
	if n := utf8.RuneCountInString(subj); n > MaxSubject {
		t.Fatalf("Subject of %d characters, want at most %d", n, MaxSubject)
	}
	if !strings.HasPrefix(subj, "Booked: Classic cut at Ünïcødé business") || !strings.HasSuffix(subj, "…") {
		t.Fatalf("Subject %.80q… does not keep its start and mark the cut", subj)
	}
}

func TestSubjectControlsRemoved(t *testing.T) {
	subj := headerLines(t, compose(t, "Booked\r\nX-Injected: yes\rBcc: x@evil.example\n\x00\x1b[2J\u0085\t at  Harbor"))
	if subj != "Booked X-Injected: yes Bcc: x@evil.example [2J at Harbor" {
		t.Fatalf("Subject %q", subj)
	}
}

// FuzzSubject composes a message with arbitrary text as its Subject and
// reads it back with net/mail and mime.
func FuzzSubject(f *testing.F) {
	f.Add("Booked: Classic cut at Harbor Barbers, Fri 6 Mar 10:00")
	f.Add("a\r\nBcc: x@evil\rb\nc\x00\u202e")
	f.Add(strings.Repeat("ü", 2000))
	f.Fuzz(func(t *testing.T, s string) {
		subj := headerLines(t, compose(t, s))
		if subj != Subject(s) {
			t.Fatalf("Subject reads back as %q, want %q", subj, Subject(s))
		}
	})
}
