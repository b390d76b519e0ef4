package testkit

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
)

// MailPart is one decoded leaf of a MIME message.
type MailPart struct {
	ContentType string            // the media type, lower case
	Params      map[string]string // its parameters (charset, method, …)
	Disposition string            // the Content-Disposition header, as sent
	Body        string            // decoded from its transfer encoding
}

// ParseMail reads an RFC 5322 message with net/mail and every MIME part
// with mime/multipart, decoding the transfer encodings (quoted-printable,
// base64); it fails the test on anything malformed.
func ParseMail(t testing.TB, raw []byte) (*mail.Message, []MailPart) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not an RFC 5322 message: %v", err)
	}
	var parts []MailPart
	var walk func(ct, cte, disp string, r io.Reader)
	walk = func(ct, cte, disp string, r io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("Content-Type %q: %v", ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatalf("multipart: %v", err)
				}
				walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p)
			}
		}
		switch strings.ToLower(cte) {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("part %s: %v", mt, err)
		}
		parts = append(parts, MailPart{ContentType: mt, Params: params, Disposition: disp, Body: string(b)})
	}
	walk(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), "", m.Body)
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
