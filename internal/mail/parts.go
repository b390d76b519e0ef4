package mail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	mime "mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// Part is one leaf of a MIME message, its transfer encoding undone.
type Part struct {
	ContentType string            // the media type, lower case
	Params      map[string]string // its parameters (charset, method, …)
	Encoding    string            // the Content-Transfer-Encoding it had, lower case
	Disposition string            // the Content-Disposition header, as sent
	Body        []byte            // decoded from its transfer encoding, not from its charset
}

// maxPartBytes bounds what ReadParts reads of one part.
const maxPartBytes = 16 << 20

// ReadParts reads an RFC 5322 message with net/mail and every MIME part
// with mime/multipart, undoing quoted-printable and base64. On a malformed
// message or part it returns what it read so far and the error. The
// development mailbox shows messages with it, and the tests read the mail
// they receive with it.
func ReadParts(raw []byte) (*mail.Message, []Part, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("not an RFC 5322 message: %w", err)
	}
	var parts []Part
	var walk func(ct, cte, disp string, r io.Reader, depth int) error
	walk = func(ct, cte, disp string, r io.Reader, depth int) error {
		if ct == "" {
			ct = "text/plain; charset=us-ascii" // RFC 2045 §5.2
		}
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			return fmt.Errorf("Content-Type %q: %w", ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") && depth < 16 {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return fmt.Errorf("multipart: %w", err)
				}
				if err := walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
					return err
				}
			}
		}
		cte = strings.ToLower(strings.TrimSpace(cte))
		switch cte {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r) // line breaks are skipped
		}
		b, err := io.ReadAll(io.LimitReader(r, maxPartBytes))
		parts = append(parts, Part{ContentType: mt, Params: params, Encoding: cte, Disposition: disp, Body: b})
		if err != nil {
			return fmt.Errorf("%s part: %w", mt, err)
		}
		return nil
	}
	err = walk(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), "", m.Body, 0)
	return m, parts, err
}
