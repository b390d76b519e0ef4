package authhttp_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestDevMailOnlyInDevelopment: the development mailbox (docs/reference.md §11)
// lists and shows the .eml files of var/mail in development, and answers
// 404 in production even when the folder holds a message.
func TestDevMailOnlyInDevelopment(t *testing.T) {
	const name = "20261201T120000Z-msg_one.eml"
	const eml = "From: Linkslot <no-reply@localhost>\r\nTo: ana@example.com\r\nSubject: Your booking\r\n" +
		"Date: Tue, 01 Dec 2026 12:00:00 +0000\r\nMessage-ID: <msg_one@localhost>\r\n\r\nSee you soon.\r\n"
	for _, tc := range []struct {
		name       string
		production bool
		want       int
	}{
		{"development", false, http.StatusOK},
		{"production", true, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			varDir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(varDir, "mail"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(varDir, "mail", name), []byte(eml), 0o600); err != nil {
				t.Fatal(err)
			}
			e := newEnvWith(t, sqltest.SQLite(t), func(d *authhttp.Deps) {
				d.Config.Production = tc.production
				d.Config.VarDir = varDir
			})
			for _, path := range []string{"/dev/mail", "/dev/mail/" + name} {
				resp, err := http.Get(e.issuer + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, tc.want)
				}
				shown := strings.Contains(string(body), "Your booking")
				if tc.production == shown {
					t.Fatalf("GET %s in %s: the message is shown=%v:\n%s", path, tc.name, shown, body)
				}
			}
		})
	}
}
