package testkit

import (
	"mime"
	"net/mail"
	"strings"
	"testing"

	lsmail "github.com/linkslot/linkslot/internal/mail"
)

// MailPart is one decoded leaf of a MIME message.
type MailPart struct {
	ContentType string            // the media type, lower case
	Params      map[string]string // its parameters (charset, method, …)
	Disposition string            // the Content-Disposition header, as sent
	Body        string            // decoded from its transfer encoding
}

// ParseMail reads an RFC 5322 message and every MIME part, decoding the
// transfer encodings (quoted-printable, base64), with the same reader the
// development mailbox uses (internal/mail.ReadParts); it fails the test on
// anything malformed.
func ParseMail(t testing.TB, raw []byte) (*mail.Message, []MailPart) {
	t.Helper()
	m, ps, err := lsmail.ReadParts(raw)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([]MailPart, len(ps))
	for i, p := range ps {
		parts[i] = MailPart{ContentType: p.ContentType, Params: p.Params, Disposition: p.Disposition, Body: string(p.Body)}
	}
	return m, parts
}

// FindPart returns the first part of media type ct that is (or is not) an
// attachment, or nil.
func FindPart(parts []MailPart, ct string, attachment bool) *MailPart {
	for i := range parts {
		if parts[i].ContentType == ct && strings.HasPrefix(parts[i].Disposition, "attachment") == attachment {
			return &parts[i]
		}
	}
	return nil
}

// Subject decodes a message's Subject header (RFC 2047 encoded words).
func Subject(t testing.TB, m *mail.Message) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("Subject %q: %v", m.Header.Get("Subject"), err)
	}
	return s
}
