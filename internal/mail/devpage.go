package mail

import (
	"html/template"
	mime "mime"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DevPage serves the development mailbox: GET /dev/mail lists the .eml
// files of dir, newest first, and GET /dev/mail/{name} shows one as text.
// Mount it only in development (CONTRACT §11: 404 outside development).
func DevPage(dir string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dev/mail", func(w http.ResponseWriter, r *http.Request) {
		entries, _ := os.ReadDir(dir)
		var rows []devRow
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".eml") {
				continue
			}
			row := devRow{Name: e.Name()}
			if f, err := os.Open(filepath.Join(dir, e.Name())); err == nil {
				if m, err := mail.ReadMessage(f); err == nil {
					dec := new(mime.WordDecoder)
					row.Subject, _ = dec.DecodeHeader(m.Header.Get("Subject"))
					row.To, _ = dec.DecodeHeader(m.Header.Get("To"))
					if d, err := m.Header.Date(); err == nil {
						row.Date = d.UTC().Format(time.RFC3339)
					}
				}
				f.Close()
			}
			rows = append(rows, row)
		}
		slices.SortFunc(rows, func(a, b devRow) int { return strings.Compare(b.Name, a.Name) })
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		_ = devList.Execute(w, struct {
			Dir  string
			Rows []devRow
		}{dir, rows})
	})
	mux.HandleFunc("GET /dev/mail/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if name != filepath.Base(name) || !strings.HasSuffix(name, ".eml") || strings.HasPrefix(name, ".") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})
	return mux
}

type devRow struct{ Name, Subject, To, Date string }

var devList = template.Must(template.New("devmail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Development mail</title></head>
<body>
<h1>Development mail</h1>
<p>E-mail this server would have sent, written to <code>{{.Dir}}</code> because no LINKSLOT_SMTP_URL is set. This page exists only in development.</p>
{{if .Rows}}<table>
<thead><tr><th>Date (UTC)</th><th>To</th><th>Subject</th></tr></thead>
<tbody>{{range .Rows}}<tr><td>{{.Date}}</td><td>{{.To}}</td><td><a href="/dev/mail/{{.Name}}">{{.Subject}}</a></td></tr>
{{end}}</tbody></table>{{else}}<p>No e-mail yet.</p>{{end}}
</body></html>
`))
