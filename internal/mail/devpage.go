package mail

import (
	"fmt"
	"html/template"
	"io"
	mime "mime"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// DevPage serves the development mailbox: GET /dev/mail lists the .eml
// files of dir, newest first, and GET /dev/mail/{name} shows one decoded
// (docs/reference.md §15): its headers in words, the text part with
// quoted-printable or base64 undone and its charset read, its http and
// https links clickable, and the other parts named; ?raw=1 shows the file
// as it is. Mount it only in development (docs/reference.md §11: 404 outside
// development).
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
					h := readableHeaders(m.Header)
					row.Subject, row.To, row.Date = h.Subject, h.To, h.Date
				}
				f.Close()
			}
			rows = append(rows, row)
		}
		slices.SortFunc(rows, func(a, b devRow) int { return strings.Compare(b.Name, a.Name) })
		devHTML(w)
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
		if r.URL.Query().Get("raw") != "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(b)
			return
		}
		msg := decodeMessage(b)
		msg.Name = name
		devHTML(w)
		_ = devMessage.Execute(w, msg)
	})
	return mux
}

// devHTML sets the headers of the mailbox's HTML pages: no script, no
// style, no frame, nothing fetched (the messages' links are followed only
// when clicked).
func devHTML(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'")
}

type devRow struct{ Name, Subject, To, Date string }

// headers are a message's headers decoded for reading (RFC 2047 words).
type headers struct{ From, To, Subject, Date string }

func readableHeaders(h mail.Header) headers {
	dec := new(mime.WordDecoder)
	dec.CharsetReader = charsetReader
	word := func(k string) string {
		v := h.Get(k)
		if s, err := dec.DecodeHeader(v); err == nil {
			return s
		}
		return v
	}
	out := headers{From: word("From"), To: word("To"), Subject: word("Subject"), Date: h.Get("Date")}
	if d, err := h.Date(); err == nil {
		out.Date = d.UTC().Format(time.RFC3339)
	}
	return out
}

// decoded is one message as the page shows it.
type decoded struct {
	Name    string
	Headers headers
	Text    []segment // the text part, links apart
	TextOf  string    // the media type Text came from
	Parts   []partRow // every part, the shown one included
	Problem string    // what could not be decoded, if anything
}

type partRow struct {
	Type, Charset, Encoding, Disposition string
	Size                                 int
}

// segment is a run of text, or a link when Href is set.
type segment struct{ Text, Href string }

// decodeMessage decodes raw for the page. It never fails: what cannot be
// read is said in Problem and the raw view stays one click away.
func decodeMessage(raw []byte) decoded {
	var d decoded
	m, parts, err := ReadParts(raw)
	if err != nil {
		d.Problem = err.Error()
	}
	if m == nil {
		return d
	}
	d.Headers = readableHeaders(m.Header)
	texts := make([]string, len(parts))
	for i, p := range parts {
		d.Parts = append(d.Parts, partRow{Type: p.ContentType, Charset: p.Params["charset"], Encoding: p.Encoding, Disposition: p.Disposition, Size: len(p.Body)})
		if strings.HasPrefix(p.ContentType, "text/") {
			s, err := toUTF8(p.Params["charset"], p.Body)
			if err != nil && d.Problem == "" {
				d.Problem = err.Error()
			}
			texts[i] = s
		}
	}
	for _, want := range []string{"text/plain", "text/html"} {
		for i, p := range parts {
			if p.ContentType == want && !strings.HasPrefix(strings.ToLower(p.Disposition), "attachment") {
				d.Text, d.TextOf = linkify(texts[i]), want
				return d
			}
		}
	}
	return d
}

// toUTF8 reads b in charset: UTF-8 and US-ASCII as they are, ISO-8859-1
// (Latin-1) byte by byte; anything else is shown as UTF-8 with a note.
func toUTF8(charset string, b []byte) (string, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	case "iso-8859-1", "latin1", "iso8859-1", "windows-1252":
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs), nil
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if utf8.ValidString(string(b)) {
		return s, nil
	}
	return s, fmt.Errorf("charset %q is not one this page reads; shown as UTF-8", charset)
}

// charsetReader lets the header decoder read the charsets toUTF8 reads.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	b, err := io.ReadAll(input)
	if err != nil {
		return nil, err
	}
	s, err := toUTF8(charset, b)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(s), nil
}

// linkPattern finds the http and https links of a text part; no other
// scheme becomes a link.
var linkPattern = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `]+`)

// linkify splits text into plain runs and links, leaving a sentence's
// closing punctuation outside the link.
func linkify(text string) []segment {
	var out []segment
	last := 0
	for _, loc := range linkPattern.FindAllStringIndex(text, -1) {
		start, end := loc[0], loc[1]
		for end > start && strings.ContainsRune(".,;:!?)]}", rune(text[end-1])) {
			end--
		}
		if end-start <= len("https://") {
			continue
		}
		if start > last {
			out = append(out, segment{Text: text[last:start]})
		}
		out = append(out, segment{Text: text[start:end], Href: text[start:end]})
		last = end
	}
	if last < len(text) {
		out = append(out, segment{Text: text[last:]})
	}
	return out
}

var devList = template.Must(template.New("devmail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Development mail</title><link rel="stylesheet" href="/static/linkslot.css"></head>
<body><main><div class="card">
<h1>Development mail</h1>
<p>E-mail this server would have sent, written to <code>{{.Dir}}</code> because no LINKSLOT_SMTP_URL is set. This page exists only in development.</p>
{{if .Rows}}<table>
<thead><tr><th>Date (UTC)</th><th>To</th><th>Subject</th></tr></thead>
<tbody>{{range .Rows}}<tr><td>{{.Date}}</td><td>{{.To}}</td><td><a href="/dev/mail/{{.Name}}">{{or .Subject "(no subject)"}}</a></td></tr>
{{end}}</tbody></table>{{else}}<p>No e-mail yet.</p>{{end}}
</div></main></body></html>
`))

var devMessage = template.Must(template.New("devmessage").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{or .Headers.Subject "(no subject)"}} — development mail</title><link rel="stylesheet" href="/static/linkslot.css"></head>
<body><main><div class="card">
<p><a href="/dev/mail">← All development mail</a></p>
<h1>{{or .Headers.Subject "(no subject)"}}</h1>
<dl>
<dt>From</dt><dd>{{.Headers.From}}</dd>
<dt>To</dt><dd>{{.Headers.To}}</dd>
<dt>Date (UTC)</dt><dd>{{.Headers.Date}}</dd>
</dl>
{{with .Problem}}<p role="alert">Part of this message could not be decoded: {{.}}</p>{{end}}
{{if .Text}}<pre class="mail">{{range .Text}}{{if .Href}}<a href="{{.Href}}" rel="noopener noreferrer">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{end}}</pre>
<p>Shown: the {{.TextOf}} part, decoded.</p>{{else}}<p>This message has no text part.</p>{{end}}
{{if .Parts}}<h2>Parts</h2>
<table><thead><tr><th>Type</th><th>Charset</th><th>Encoding</th><th>Disposition</th><th>Bytes</th></tr></thead>
<tbody>{{range .Parts}}<tr><td>{{.Type}}</td><td>{{.Charset}}</td><td>{{.Encoding}}</td><td>{{.Disposition}}</td><td>{{.Size}}</td></tr>
{{end}}</tbody></table>{{end}}
<p><a href="/dev/mail/{{.Name}}?raw=1">The message as written</a> (<code>{{.Name}}</code>)</p>
</div></main></body></html>
`))
