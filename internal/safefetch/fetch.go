package safefetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/linkslot/linkslot/internal/admission"
	"github.com/linkslot/linkslot/internal/loopback"
)

// Reason classifies a failed fetch. Its value is also the metrics outcome.
type Reason string

// The reasons a fetch fails.
const (
	ReasonURL      Reason = "bad_url"         // not https (or http to loopback in development), or malformed
	ReasonAddress  Reason = "address_refused" // resolves into a special-use range
	ReasonRedirect Reason = "redirect"        // answered 3xx; redirects are not followed
	ReasonStatus   Reason = "status"          // answered something other than 200
	ReasonNotJSON  Reason = "not_json"        // Content-Type is not JSON, or the body is not valid JSON
	ReasonTooLarge Reason = "too_large"       // body over the limit
	ReasonTimeout  Reason = "timeout"         // the whole exchange took longer than the limit
	ReasonTLS      Reason = "tls"             // the certificate did not verify
	ReasonNetwork  Reason = "network"         // name resolution or connection failed
	ReasonInvalid  Reason = "invalid"         // Decode refused the document
)

// Outcomes of a successful Get, for Observe.
const (
	OutcomeOK     = "ok"
	OutcomeCached = "cached"
)

// Error is a failed fetch. Detail is for the log; it never holds the body.
type Error struct {
	Reason Reason
	Detail string
	Err    error // the cause, if any (a Decode error for ReasonInvalid)
}

func (e *Error) Error() string {
	msg := "safefetch: " + string(e.Reason)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Describe is the reason as a person reads it, completing "Linkslot could
// not read the app's description because …".
func (r Reason) Describe() string {
	switch r {
	case ReasonURL:
		return "its address is not an https URL Linkslot may fetch"
	case ReasonAddress:
		return "its address points into a private or special-use network, which Linkslot does not fetch from"
	case ReasonRedirect:
		return "its address redirects elsewhere, and Linkslot does not follow redirects"
	case ReasonStatus:
		return "its server did not answer with the document"
	case ReasonNotJSON:
		return "its server did not answer with a JSON document"
	case ReasonTooLarge:
		return "the document is larger than Linkslot accepts"
	case ReasonTimeout:
		return "its server did not answer in time"
	case ReasonTLS:
		return "its server's certificate could not be verified"
	case ReasonNetwork:
		return "its server could not be reached"
	case ReasonInvalid:
		return "the document is not valid"
	}
	return "it could not be fetched"
}

// ReasonOf returns the Reason of a *Error in err's chain, or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Options configure a Fetcher. Zero values take the documented defaults.
type Options[T any] struct {
	// Kind names what is fetched ("cimd", "jwks") in metrics and errors.
	Kind string
	// Development admits http and loopback addresses for a URL whose host
	// is localhost or a loopback address (LINKSLOT_ENV=development).
	Development bool
	// MaxBytes limits the body; default 5 KiB (5120 bytes).
	MaxBytes int64
	// Timeout bounds the whole exchange, body included; default 5 s.
	Timeout time.Duration
	// MinTTL and MaxTTL bound how long an accepted document is cached;
	// defaults 5 min and 24 h.
	MinTTL, MaxTTL time.Duration
	// MaxEntries bounds the cache; default 1024.
	MaxEntries int
	// Decode validates and converts an accepted body; a non-nil error is a
	// ReasonInvalid failure and nothing is cached. Required.
	Decode func(rawURL string, body []byte) (T, error)
	// Resolver and RootCAs are passed to the transport (tests).
	Resolver Resolver
	RootCAs  *x509.CertPool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Observe is told the outcome of every Get (OutcomeOK, OutcomeCached,
	// or a Reason); nil ignores them.
	Observe func(kind, outcome string)
}

// Fetcher fetches, validates and caches documents of type T.
type Fetcher[T any] struct {
	opts   Options[T]
	client *http.Client
	group  singleflight.Group

	mu    sync.Mutex
	cache map[string]entry[T]
}

type entry[T any] struct {
	value   T
	expires time.Time
}

// New builds a Fetcher. It panics without a Decode function: that is a
// programming error, not a runtime condition.
func New[T any](opts Options[T]) *Fetcher[T] {
	if opts.Decode == nil {
		panic("safefetch: Options.Decode is required")
	}
	if opts.Kind == "" {
		opts.Kind = "document"
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 5 << 10
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MinTTL <= 0 {
		opts.MinTTL = 5 * time.Minute
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = 24 * time.Hour
	}
	if opts.MaxTTL < opts.MinTTL {
		opts.MaxTTL = opts.MinTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rules := Rules{AllowLoopback: opts.Development}
	return &Fetcher[T]{
		opts:   opts,
		client: NewClient(rules, DialOptions{Resolver: opts.Resolver, RootCAs: opts.RootCAs, DialTimeout: opts.Timeout}),
		cache:  make(map[string]entry[T]),
	}
}

// CheckURL applies the URL rule without fetching: https, or in development
// http to localhost or a loopback address; a host; no user information.
func CheckURL(rawURL string, development bool) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &Error{Reason: ReasonURL, Detail: "not a URL"}
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, &Error{Reason: ReasonURL, Detail: "no host"}
	}
	if u.User != nil {
		return nil, &Error{Reason: ReasonURL, Detail: "user information in the URL"}
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !development || !loopback.Host(u.Hostname()) {
			return nil, &Error{Reason: ReasonURL, Detail: "not https"}
		}
	default:
		return nil, &Error{Reason: ReasonURL, Detail: "not https"}
	}
	return u, nil
}

// Get returns the decoded document at rawURL, from the cache while it is
// fresh.
func (f *Fetcher[T]) Get(ctx context.Context, rawURL string) (T, error) {
	if v, ok := f.cached(rawURL); ok {
		f.observe(OutcomeCached)
		return v, nil
	}
	// The wait is on another host: an admitted request's slot goes back
	// to the gate meanwhile.
	defer admission.Outside(ctx)()
	res, err, _ := f.group.Do(rawURL, func() (any, error) {
		if v, ok := f.cached(rawURL); ok { // filled while we waited for the group
			return v, nil
		}
		v, ttl, err := f.fetch(ctx, rawURL)
		if err != nil {
			return v, err
		}
		f.store(rawURL, v, ttl)
		return v, nil
	})
	if err != nil {
		var zero T
		f.observe(string(ReasonOf(err)))
		return zero, err
	}
	f.observe(OutcomeOK)
	return res.(T), nil
}

// Forget drops rawURL from the cache (an administrator changed the client).
func (f *Fetcher[T]) Forget(rawURL string) {
	f.mu.Lock()
	delete(f.cache, rawURL)
	f.mu.Unlock()
}

func (f *Fetcher[T]) observe(outcome string) {
	if f.opts.Observe != nil {
		f.opts.Observe(f.opts.Kind, outcome)
	}
}

func (f *Fetcher[T]) cached(rawURL string) (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.cache[rawURL]
	if !ok {
		var zero T
		return zero, false
	}
	if !f.opts.Now().Before(e.expires) {
		delete(f.cache, rawURL)
		var zero T
		return zero, false
	}
	return e.value, true
}

func (f *Fetcher[T]) store(rawURL string, v T, ttl time.Duration) {
	now := f.opts.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cache) >= f.opts.MaxEntries {
		var oldestKey string
		var oldest time.Time
		for k, e := range f.cache {
			if !now.Before(e.expires) {
				delete(f.cache, k)
				continue
			}
			if oldestKey == "" || e.expires.Before(oldest) {
				oldestKey, oldest = k, e.expires
			}
		}
		if len(f.cache) >= f.opts.MaxEntries {
			delete(f.cache, oldestKey)
		}
	}
	f.cache[rawURL] = entry[T]{value: v, expires: now.Add(ttl)}
}

func (f *Fetcher[T]) fetch(parent context.Context, rawURL string) (T, time.Duration, error) {
	var zero T
	u, err := CheckURL(rawURL, f.opts.Development)
	if err != nil {
		return zero, 0, err
	}
	ctx, cancel := context.WithTimeout(parent, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return zero, 0, &Error{Reason: ReasonURL, Detail: "not a URL"}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Linkslot")
	resp, err := f.client.Do(req)
	if err != nil {
		return zero, 0, classify(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return zero, 0, &Error{Reason: ReasonRedirect, Detail: fmt.Sprintf("answered %d", resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return zero, 0, &Error{Reason: ReasonStatus, Detail: fmt.Sprintf("answered %d", resp.StatusCode)}
	}
	if !isJSONType(resp.Header.Get("Content-Type")) {
		return zero, 0, &Error{Reason: ReasonNotJSON, Detail: "Content-Type is not JSON"}
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return zero, 0, &Error{Reason: ReasonTooLarge, Detail: fmt.Sprintf("Content-Length %d over %d bytes", resp.ContentLength, f.opts.MaxBytes)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return zero, 0, classify(ctx, err)
	}
	if ctx.Err() != nil { // the deadline passed while reading: the body may be cut short
		return zero, 0, &Error{Reason: ReasonTimeout, Detail: "no complete answer in time"}
	}
	if int64(len(body)) > f.opts.MaxBytes {
		return zero, 0, &Error{Reason: ReasonTooLarge, Detail: fmt.Sprintf("body over %d bytes", f.opts.MaxBytes)}
	}
	if !json.Valid(bytes.TrimSpace(body)) {
		return zero, 0, &Error{Reason: ReasonNotJSON, Detail: "body is not valid JSON"}
	}
	v, err := f.opts.Decode(rawURL, body)
	if err != nil {
		return zero, 0, &Error{Reason: ReasonInvalid, Err: err}
	}
	return v, CacheTTL(resp.Header, f.opts.Now(), f.opts.MinTTL, f.opts.MaxTTL), nil
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// classify turns a transport error into an *Error.
func classify(ctx context.Context, err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Reason: ReasonTimeout, Detail: "no complete answer in time"}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Reason: ReasonTimeout, Detail: "no complete answer in time"}
	}
	var cerr *tls.CertificateVerificationError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	if errors.As(err, &cerr) || errors.As(err, &uerr) || errors.As(err, &herr) {
		return &Error{Reason: ReasonTLS, Detail: "certificate not verified"}
	}
	return &Error{Reason: ReasonNetwork, Detail: strings.TrimPrefix(scrub(err), "safefetch: ")}
}

// scrub keeps the transport's message but drops the URL a *url.Error
// repeats (it may carry a query).
func scrub(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Op + ": " + uerr.Err.Error()
	}
	return err.Error()
}
