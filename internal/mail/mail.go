// Package mail composes and sends Linkslot's e-mail with
// github.com/wneessen/go-mail.
//
// A Message is what the outbox stores: recipient, subject, a plain-text and
// an HTML body written for people, and optionally an iCalendar invitation.
// Compose turns it into one MIME message — multipart/alternative with
// text/plain, text/html and text/calendar; method=… parts, the invitation
// also attached as invite.ics for clients that look there — with a
// Message-ID derived from the message's outbox id, so a retried delivery is
// recognisably the same e-mail.
//
// Transports (LINKSLOT_SMTP_URL): smtp://[user:pass@]host:port uses
// STARTTLS when the server offers it; smtps:// is implicit TLS; "off" sends
// nothing; in development with no URL, messages are written as .eml files
// to var/mail/ and listed at /dev/mail (see DevPage).
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"

	"github.com/linkslot/linkslot/internal/textout"
)

// Message is one e-mail to one person.
type Message struct {
	ID       string    `json:"id"` // the outbox id; the Message-ID is <ID@host>
	To       string    `json:"to"`
	Subject  string    `json:"subject"`
	Text     string    `json:"text"`
	HTML     string    `json:"html,omitempty"`
	Calendar string    `json:"calendar,omitempty"` // an iCalendar object
	Method   string    `json:"method,omitempty"`   // its METHOD (REQUEST, CANCEL)
	Date     time.Time `json:"date"`
}

// Sender delivers composed messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Composer holds what every message shares: the From address and the host
// that names Message-IDs.
type Composer struct {
	From string // "Linkslot <no-reply@host>"
	Host string // the issuer's host name
}

// DefaultFrom is LINKSLOT_MAIL_FROM's default for an issuer host.
func DefaultFrom(host string) string { return "Linkslot <no-reply@" + host + ">" }

// CheckFrom validates a From address.
func CheckFrom(from string) error {
	if _, err := mail.ParseAddress(from); err != nil {
		return fmt.Errorf("%q is not an e-mail address (example: Linkslot <no-reply@example.com>)", from)
	}
	return nil
}

// Compose builds the MIME message.
func (c Composer) Compose(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(c.From); err != nil {
		return nil, fmt.Errorf("mail: from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail: to: %w", err)
	}
	msg.Subject(Subject(m.Subject))
	msg.SetMessageIDWithValue(m.ID + "@" + c.Host)
	msg.SetDateWithValue(m.Date)
	msg.SetGenHeader(gomail.HeaderXMailer, "Linkslot")
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text, gomail.WithPartEncoding(gomail.EncodingQP))
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML, gomail.WithPartEncoding(gomail.EncodingQP))
	}
	if m.Calendar != "" {
		method := m.Method
		if method == "" {
			method = "PUBLISH"
		}
		msg.AddAlternativeString(gomail.ContentType("text/calendar; method="+method), m.Calendar,
			gomail.WithPartEncoding(gomail.EncodingB64))
		if err := msg.AttachReader("invite.ics", strings.NewReader(m.Calendar),
			gomail.WithFileContentType(gomail.ContentType("application/ics"))); err != nil {
			return nil, fmt.Errorf("mail: attach invitation: %w", err)
		}
	}
	return msg, nil
}

// Bytes renders the message as RFC 5322 bytes.
func (c Composer) Bytes(m Message) ([]byte, error) {
	msg, err := c.Compose(m)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := msg.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Transport kinds of LINKSLOT_SMTP_URL.
const (
	KindSMTP = "smtp"
	KindDir  = "dir" // development: .eml files
	KindOff  = "off"
)

// Settings is a parsed LINKSLOT_SMTP_URL.
type Settings struct {
	Kind     string
	Host     string
	Port     int
	Implicit bool // smtps://
	Username string
	Password string
}

// ParseURL parses LINKSLOT_SMTP_URL: "" (the development folder), "off",
// smtp://[user:pass@]host[:port] (default port 587) or smtps://… (465).
// Errors never include the password.
func ParseURL(raw string) (Settings, error) {
	raw = strings.TrimSpace(raw)
	switch raw {
	case "":
		return Settings{Kind: KindDir}, nil
	case "off":
		return Settings{Kind: KindOff}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return Settings{}, errors.New("must be smtp://[user:pass@]host:port, smtps://… or off")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Settings{}, errors.New("must have no path or query (smtp://[user:pass@]host:port)")
	}
	s := Settings{Kind: KindSMTP, Host: u.Hostname(), Implicit: u.Scheme == "smtps", Port: 587}
	if s.Implicit {
		s.Port = 465
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Settings{}, fmt.Errorf("port %q is not a port number", p)
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	return s, nil
}

// SMTP sends through an SMTP server, one connection per message.
type SMTP struct {
	Composer
	Settings Settings
	Timeout  time.Duration // per message, default 30s
	// TLSServerName overrides the host name checked in the server's
	// certificate (tests).
	TLSServerName string
}

// Send delivers one message.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.Compose(m)
	if err != nil {
		return err
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(s.Settings.Port), gomail.WithTimeout(timeout), gomail.WithHELO(s.Host)}
	if s.Settings.Implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.Settings.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.Settings.Username), gomail.WithPassword(s.Settings.Password))
	}
	c, err := gomail.NewClient(s.Settings.Host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp %s: %w", net.JoinHostPort(s.Settings.Host, strconv.Itoa(s.Settings.Port)), err)
	}
	return nil
}

// Dir writes each message as an .eml file (development).
type Dir struct {
	Composer
	Path string
}

// Send writes the message to Path/<date>-<id>.eml. The same id overwrites
// the same file, so a retried delivery leaves one file.
func (d *Dir) Send(_ context.Context, m Message) error {
	b, err := d.Bytes(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o750); err != nil {
		return err
	}
	name := m.Date.UTC().Format("20060102T150405Z") + "-" + safeName(m.ID) + ".eml"
	tmp := filepath.Join(d.Path, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(d.Path, name))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// Off sends nothing.
type Off struct{}

// Send discards the message.
func (Off) Send(context.Context, Message) error { return nil }

// New returns the Sender for settings; dir is the development folder.
func New(s Settings, c Composer, dir string) Sender {
	switch s.Kind {
	case KindSMTP:
		return &SMTP{Composer: c, Settings: s}
	case KindDir:
		return &Dir{Composer: c, Path: dir}
	}
	return Off{}
}

// MaxSubject is how many characters of a Subject are sent (docs/reference.md
// §11); a longer one is cut at a word and ends in "…".
const MaxSubject = 200

// Subject is s as a Subject header holds it: textout.OneLine (line breaks
// and tabs as spaces, other control characters removed, runs of white
// space as one), at most MaxSubject characters. go-mail then encodes and
// folds it, so no header line exceeds RFC 5322's 998 octets.
func Subject(s string) string {
	s = textout.OneLine(s)
	if utf8.RuneCountInString(s) <= MaxSubject {
		return s
	}
	r := []rune(s)[:MaxSubject-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > MaxSubject/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
