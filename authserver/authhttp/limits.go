package authhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/problem"
)

// MaxBodyBytes bounds the body of every request to the authorization
// server (OAuth endpoints, sign-in, sign-up and account pages, admin pages
// and API) except a catalog import.
const MaxBodyBytes = 1 << 20

// MaxImportBytes bounds a catalog import (POST /admin/catalog, the form
// around a catalog file, and POST /admin/api/catalog).
const MaxImportBytes = catalogfile.MaxFileBytes + 64<<10

// ImportTimeout is the deadline of a catalog import (POST /admin/catalog
// and POST /admin/api/catalog) in place of the request deadline: a file of
// catalogfile.MaxBusinesses businesses, written one business per
// transaction, takes minutes on a busy PostgreSQL (docs/reference.md §6).
const ImportTimeout = 10 * time.Minute

// importPaths are the routes whose bodies may be catalog files.
var importPaths = map[string]bool{"/admin/catalog": true, "/admin/api/catalog": true}

// limitBodies answers 413 to a request whose body is larger than its
// route's limit, before any handler parses it. Ordinary bodies (1 MiB at
// most) are read here in full, so a body without Content-Length is refused
// the same way; an import's body is bounded with http.MaxBytesReader and
// its handlers answer 413 themselves when they hit the bound.
func limitBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		if importPaths[r.URL.Path] {
			if r.ContentLength > MaxImportBytes {
				tooLarge(w, r, MaxImportBytes)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, MaxImportBytes)
			h.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxBodyBytes {
			tooLarge(w, r, MaxBodyBytes)
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		if err != nil {
			w.Header().Set("Connection", "close")
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
			return
		}
		if len(b) > MaxBodyBytes {
			tooLarge(w, r, MaxBodyBytes)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		h.ServeHTTP(w, r)
	})
}

// tooLarge answers 413 in the form the route's clients read: an RFC 6749
// error object on the OAuth endpoints, the admin API's error object on the
// admin API, and a fixed page elsewhere. The connection is closed: the rest
// of the body is not read.
func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	desc := fmt.Sprintf("The request body is larger than %s.", size(limit))
	var body any
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/oauth2/"), p == "/userinfo":
		body = map[string]string{"error": problem.CodeInvalidRequest, "error_description": desc}
	case strings.HasPrefix(p, "/admin/api/"):
		body = map[string]any{"error": map[string]string{"code": problem.CodeTooLarge, "message": desc}}
	default:
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprintf(w, tooLargePage, desc)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_ = json.NewEncoder(w).Encode(body)
}

func size(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

const tooLargePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Request too large · Linkslot</title></head>
<body><h1>Request too large</h1><p>%s Go back and send less.</p></body></html>
`
