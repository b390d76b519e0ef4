package calendar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/linkslot/linkslot/internal/safefetch"
)

// Limits of one exchange with a calendar server.
const (
	Timeout  = 30 * time.Second
	MaxBytes = 32 << 20
)

// errTooLarge is a response past MaxBytes.
var errTooLarge = errors.New("calendar: the answer is larger than 32 MiB")

type headerKey struct{}

// withHeaders adds request headers (If-Match, If-None-Match) to the
// requests go-webdav makes under ctx: its client takes no conditions of
// its own.
func withHeaders(ctx context.Context, kv ...string) context.Context {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return context.WithValue(ctx, headerKey{}, h)
}

// httpClient is the webdav.HTTPClient of one calendar: the safefetch
// client, basic authentication, the conditional headers of the context, a
// cap on each answer's size, and the last status answered (go-webdav keeps
// its own error type internal).
type httpClient struct {
	c                  *http.Client
	username, password string

	mu     sync.Mutex
	status int
}

func (h *httpClient) Do(req *http.Request) (*http.Response, error) {
	if hs, ok := req.Context().Value(headerKey{}).(http.Header); ok {
		for k, v := range hs {
			req.Header[k] = v
		}
	}
	if h.username != "" || h.password != "" {
		req.SetBasicAuth(h.username, h.password)
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.status = resp.StatusCode
	h.mu.Unlock()
	if resp.ContentLength > MaxBytes {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &capped{r: resp.Body, left: MaxBytes}
	return resp, nil
}

// resetStatus forgets the last status, before a request whose own status
// (or none, when it fails before an answer) is to be told apart.
func (h *httpClient) resetStatus() {
	h.mu.Lock()
	h.status = 0
	h.mu.Unlock()
}

func (h *httpClient) lastStatus() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

type capped struct {
	r    io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

// conn is a connection to one calendar.
type conn struct {
	http *httpClient
	dav  *webdav.Client
	cal  *caldav.Client
	// sync asks for what changed since a sync token (RFC 6578's
	// sync-collection REPORT). go-webdav v0.6.0 offers that REPORT only on
	// its CardDAV client; the REPORT is plain WebDAV, and the CardDAV
	// address-data it also asks for is answered "not found" by a calendar
	// server and ignored (docs/calendars.md "Incremental").
	sync       *carddav.Client
	collection string // the collection's path, with a trailing slash
	base       *url.URL
}

// dial checks rawURL under safefetch's rules and builds the clients.
func dial(rawURL, username, password string, development bool, opts safefetch.DialOptions, timeout time.Duration) (*conn, error) {
	u, err := safefetch.CheckURL(rawURL, development)
	if err != nil {
		return nil, err
	}
	if err := safefetch.CheckTarget(u, safefetch.Rules{AllowLoopback: development}); err != nil {
		return nil, err
	}
	tr := safefetch.NewTransport(safefetch.Rules{AllowLoopback: development}, opts)
	tr.ResponseHeaderTimeout = timeout // a REPORT of a whole calendar takes the server a while
	hc := &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	h := &httpClient{c: hc, username: username, password: password}
	c := &conn{http: h, base: u}
	c.collection = u.Path
	if !strings.HasSuffix(c.collection, "/") {
		c.collection += "/"
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if c.dav, err = webdav.NewClient(h, root.String()); err != nil {
		return nil, err
	}
	if c.cal, err = caldav.NewClient(h, root.String()); err != nil {
		return nil, err
	}
	if c.sync, err = carddav.NewClient(h, root.String()); err != nil {
		return nil, err
	}
	return c, nil
}

// objectPath is the path of the object Linkslot keeps for a booking.
func (c *conn) objectPath(reference string) string {
	return c.collection + url.PathEscape(reference) + ".ics"
}

func quote(etag string) string {
	if etag == "" || strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, `W/"`) {
		return etag
	}
	return `"` + etag + `"`
}

// Problem is a failed exchange with a calendar, said for whoever set the
// calendar up: what happened and what to fix. It never holds the password.
type Problem struct {
	Message string
	Err     error // the cause, for the log
	// Retry: trying again later may work (the server is down or slow).
	Retry bool
}

func (p *Problem) Error() string { return p.Message }
func (p *Problem) Unwrap() error { return p.Err }

// explain turns a failure into a Problem. status is the last HTTP status
// the server answered (0: none).
func explain(err error, status int) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var se *safefetch.Error
	switch {
	case errors.Is(err, errTooLarge):
		return &Problem{Message: "The calendar answered more than 32 MiB at once. Use a calendar with fewer events, or split old events into another calendar.", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &Problem{Message: fmt.Sprintf("The calendar server did not answer within %s. Check that it is up; Linkslot tries again at the next sync.", Timeout), Err: err, Retry: true}
	case errors.As(err, &se):
		if se.Reason == safefetch.ReasonNetwork {
			return &Problem{Message: "The calendar server could not be reached (" + se.Detail + "). Check the URL's host, or that the server is up; Linkslot tries again at the next sync.", Err: err, Retry: true}
		}
		return &Problem{Message: "Linkslot cannot use this calendar URL: " + se.Reason.Describe() + ". Use the calendar's https URL.", Err: err}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &Problem{Message: "The calendar server refused the user name or password. Check them (an app password, for iCloud, Google or Fastmail) and set the calendar again.", Err: err}
	case status == http.StatusNotFound:
		return &Problem{Message: "Nothing was found at the calendar URL. Use the URL of the calendar itself (a collection, such as https://HOST/dav/calendars/USER/CALENDAR/).", Err: err}
	case status >= 500:
		return &Problem{Message: fmt.Sprintf("The calendar server failed (HTTP %d). Linkslot tries again at the next sync; if it goes on, check the server.", status), Err: err, Retry: true}
	case status >= 400:
		return &Problem{Message: fmt.Sprintf("The calendar server refused the request (HTTP %d): the URL is probably not a CalDAV calendar. Use the URL of the calendar itself, or --ics for an iCalendar file.", status), Err: err}
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) {
		return &Problem{Message: "The calendar server could not be reached. Check the URL's host, or that the server is up; Linkslot tries again at the next sync.", Err: err, Retry: true}
	}
	return &Problem{Message: "The calendar could not be read: " + scrub(err) + ".", Err: err, Retry: true}
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

// scrub keeps an error's text to one line without the URL's user info.
func scrub(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
