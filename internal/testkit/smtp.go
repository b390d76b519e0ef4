package testkit

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is one message an SMTPServer received.
type Mail struct {
	From string
	To   []string
	Data []byte // the message as sent (RFC 5322)
}

// SMTPServer is a real SMTP server (github.com/emersion/go-smtp) on a
// loopback port that keeps every message it accepts. Set Fail to make it
// refuse messages (a temporary 451 error) until it is cleared.
type SMTPServer struct {
	Addr string // host:port

	mu    sync.Mutex
	mails []Mail
	fail  bool
	got   chan struct{}
}

// NewSMTPServer starts an SMTPServer, stopped when the test ends.
func NewSMTPServer(t testing.TB) *SMTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SMTPServer{Addr: l.Addr().String(), got: make(chan struct{}, 1)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }))
	srv.Domain = "mx.test"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 10 << 20
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// URL is the LINKSLOT_SMTP_URL of the server.
func (s *SMTPServer) URL() string { return "smtp://" + s.Addr }

// SetFail makes the server refuse (or accept again) messages.
func (s *SMTPServer) SetFail(fail bool) {
	s.mu.Lock()
	s.fail = fail
	s.mu.Unlock()
}

// Mails returns the messages received so far.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// WaitFor waits until at least n messages arrived and returns them.
func (s *SMTPServer) WaitFor(t testing.TB, n int, timeout time.Duration) []Mail {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if m := s.Mails(); len(m) >= n {
			return m
		}
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("SMTP server got %d messages, want %d", len(s.Mails()), n)
		}
	}
}

type smtpSession struct {
	s    *SMTPServer
	from string
	to   []string
}

func (x *smtpSession) Reset()        { x.from, x.to = "", nil }
func (x *smtpSession) Logout() error { return nil }
func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}
func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *smtpSession) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.fail {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	if x.from == "" || len(x.to) == 0 {
		return errors.New("no envelope")
	}
	x.s.mails = append(x.s.mails, Mail{From: x.from, To: x.to, Data: b.Bytes()})
	select {
	case x.s.got <- struct{}{}:
	default:
	}
	return nil
}
