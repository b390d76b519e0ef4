package mail

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDevMessageDecoded: a message shows decoded — the composer's own
// multipart, quoted-printable message with a long link that the encoding
// splits across lines and whose = reads =3D; a hand-written base64 Latin-1
// one with an encoded subject — with its http and https links clickable,
// only those, and everything escaped.
func TestDevMessageDecoded(t *testing.T) {
	dir := t.TempDir()
	link := "https://auth.example.com/verify?token=" + strings.Repeat("Ab0_", 30) + "&next=%2Faccount"
	raw, err := Composer{From: "Linkslot <no-reply@localhost>", Host: "localhost"}.Bytes(Message{ID: "msg_qp", To: "zoë@example.com",
		Subject: "Confirm your e-mail address — Linkslot",
		Text:    "Hello,\n\nOpen " + link + ".\nNot this: javascript:alert(1) nor <script>alert(2)</script>\nhttp://x.example/a?b=1&c=2)",
		HTML:    "<p>Open <a href=\"" + link + "\">the link</a></p>", Date: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "=3D") {
		t.Fatalf("the composed message is not quoted-printable as this test assumes:\n%s", raw)
	}
	latin := "From: =?iso-8859-1?q?Caf=E9?= <cafe@example.com>\r\nTo: ana@example.com\r\nSubject: =?utf-8?b?UsOpc2VydmF0aW9u?=\r\n" +
		"Date: Tue, 01 Dec 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\nQ2Fm6SBkZSBsYSBnYXJlOiBodHRwOi8vY2Fm\r\nZS5leGFtcGxlL21lbnU=\r\n"
	for name, b := range map[string][]byte{"a-qp.eml": raw, "b-latin.eml": []byte(latin)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(DevPage(dir))
	defer srv.Close()
	get := func(path string) (string, http.Header) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, b)
		}
		return string(b), res.Header
	}

	page, h := get("/dev/mail/a-qp.eml")
	if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'self'; frame-ancestors 'none'" {
		t.Errorf("CSP = %q", csp)
	}
	escaped := strings.ReplaceAll(link, "&", "&amp;")
	for _, want := range []string{
		`<a href="` + escaped + `" rel="noopener noreferrer">` + escaped + `</a>.`, // whole, the full stop outside
		`<a href="http://x.example/a?b=1&amp;c=2" rel="noopener noreferrer">http://x.example/a?b=1&amp;c=2</a>)`,
		"Confirm your e-mail address — Linkslot", "zoë@example.com", "2026-03-01T10:00:00Z",
		"&lt;script&gt;alert(2)&lt;/script&gt;", "javascript:alert(1)", "Shown: the text/plain part",
		"<td>text/html</td>", `href="/dev/mail/a-qp.eml?raw=1"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the decoded page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "=3D") || strings.Contains(page, "=\r\n") || strings.Contains(page, `href="javascript`) || strings.Contains(page, "<script>") {
		t.Errorf("the page shows the encoding, or a link or script it should not:\n%s", page)
	}

	page, _ = get("/dev/mail/b-latin.eml")
	for _, want := range []string{"Réservation", "Café &lt;cafe@example.com&gt;", "Café de la gare: ",
		`<a href="http://cafe.example/menu" rel="noopener noreferrer">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the Latin-1 page lacks %q:\n%s", want, page)
		}
	}
	list, _ := get("/dev/mail")
	if !strings.Contains(list, "Réservation") || !strings.Contains(list, "Confirm your e-mail address — Linkslot") {
		t.Errorf("the list lacks the decoded subjects:\n%s", list)
	}
	if raw, _ := get("/dev/mail/a-qp.eml?raw=1"); !strings.Contains(raw, "=3D") {
		t.Errorf("?raw=1 is not the file as written:\n%s", raw)
	}
}

func TestLinkify(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"see https://a.example/x.", "see |[https://a.example/x]|."},
		{"(http://a.example/p?q=1)", "(|[http://a.example/p?q=1]|)"},
		{"ftp://a.example and https:// alone", "ftp://a.example and https:// alone"},
		{"two https://a.example https://b.example", "two |[https://a.example]| |[https://b.example]"},
	} {
		var parts []string
		for _, s := range linkify(tt.in) {
			if s.Href != "" {
				if s.Href != s.Text {
					t.Errorf("%q: href %q shows %q", tt.in, s.Href, s.Text)
				}
				parts = append(parts, "["+s.Href+"]")
			} else {
				parts = append(parts, s.Text)
			}
		}
		if got := strings.Join(parts, "|"); got != tt.want {
			t.Errorf("linkify(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
