package mail_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/mail"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want mail.Settings
	}{
		{"", mail.Settings{Kind: mail.KindDir}},
		{"off", mail.Settings{Kind: mail.KindOff}},
		{"smtp://mx.example.com", mail.Settings{Kind: mail.KindSMTP, Host: "mx.example.com", Port: 587}},
		{"smtp://u:p%40ss@mx.example.com:2525", mail.Settings{Kind: mail.KindSMTP, Host: "mx.example.com", Port: 2525, Username: "u", Password: "p@ss"}},
		{"smtps://mx.example.com", mail.Settings{Kind: mail.KindSMTP, Host: "mx.example.com", Port: 465, Implicit: true}},
	} {
		got, err := mail.ParseURL(c.raw)
		if err != nil || got != c.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{"mailto:x@example.com", "smtp://", "smtp://h:0", "smtp://h:25?x=1", "smtp://u:secret@h:70000"} {
		if _, err := mail.ParseURL(bad); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseURL(%q): %v", bad, err)
		}
	}
}

// TestDevMailbox: without an SMTP URL in development, messages are .eml
// files (one per message id, so a retry leaves one) listed at /dev/mail.
func TestDevMailbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	d := &mail.Dir{Composer: mail.Composer{From: "Linkslot <no-reply@localhost>", Host: "localhost"}, Path: dir}
	m := mail.Message{ID: "msg_one", To: "pat@example.com", Subject: "Booked: Classic cut", Text: "Your booking is confirmed.",
		HTML: "<p>Your booking is confirmed.</p>", Date: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	for i := 0; i < 2; i++ {
		if err := d.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("%d files, want 1: %v", len(files), files)
	}
	srv := httptest.NewServer(mail.DevPage(dir))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/dev/mail")
	name := filepath.Base(files[0])
	if code != 200 || !strings.Contains(body, "Booked: Classic cut") || !strings.Contains(body, "pat@example.com") || !strings.Contains(body, name) {
		t.Fatalf("list: %d\n%s", code, body)
	}
	if code, body := get("/dev/mail/" + name + "?raw=1"); code != 200 || !strings.Contains(body, "Message-ID: <msg_one@localhost>") {
		t.Fatalf("message: %d\n%s", code, body)
	}
	os.WriteFile(filepath.Join(t.TempDir(), "secret.eml"), []byte("x"), 0o600)
	for _, p := range []string{"/dev/mail/..%2fsecret.eml", "/dev/mail/missing.eml", "/dev/mail/x.txt"} {
		if code, _ := get(p); code != 404 {
			t.Errorf("%s: %d", p, code)
		}
	}
}
