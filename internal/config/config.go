// Package config reads Linkslot's configuration from the environment once,
// validates all of it, and reports every problem together.
//
// Both servers read the same variables (docs/reference.md §1); each ignores what it
// does not use. Zero values of the optional fields mean the documented
// default. Unknown names the LINKSLOT_ variables of an environment that
// none of them reads, with the nearest known name (names.go).
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/authheader"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/dcr"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// Config is the validated configuration.
type Config struct {
	DatabaseURL string // LINKSLOT_DATABASE_URL, default sqlite://var/linkslot.db
	AuthListen  string // LINKSLOT_AUTH_LISTEN, default 127.0.0.1:8080
	Issuer      string // LINKSLOT_ISSUER, default http://127.0.0.1:8080
	RSListen    string // LINKSLOT_RS_LISTEN, default 127.0.0.1:8081
	Resource    string // LINKSLOT_RESOURCE, default http://127.0.0.1:8081/mcp
	// SecretKey keys encryption at rest, CSRF and cookies (32+ bytes).
	// LINKSLOT_SECRET_KEY; in development generated into var/secret.key.
	SecretKey    []byte
	DemoPassword string // LINKSLOT_DEMO_PASSWORD, default linkslot-demo
	// Production (LINKSLOT_ENV=production) requires an explicit secret key
	// and an https issuer and resource.
	Production bool
	// AuthMetricsListen and RSMetricsListen are where the authorization
	// server and the resource server serve Prometheus /metrics, each on a
	// listener of its own (LINKSLOT_AUTH_METRICS_LISTEN,
	// LINKSLOT_RS_METRICS_LISTEN; empty: off). Two variables, so that both
	// servers started from one environment (make run) can each have one.
	AuthMetricsListen string
	RSMetricsListen   string
	// AllowedOrigins are extra browser origins the MCP endpoint accepts
	// (LINKSLOT_ALLOWED_ORIGINS, comma-separated).
	AllowedOrigins []string
	// Database pool (LINKSLOT_DB_MAX_CONNS, default 16 on PostgreSQL).
	DBMaxConns int
	// RefreshIdle / RefreshAbsolute bound refresh tokens
	// (LINKSLOT_REFRESH_IDLE, default 720h; LINKSLOT_REFRESH_ABSOLUTE, 2160h).
	RefreshIdle     time.Duration
	RefreshAbsolute time.Duration
	// RefreshGrace is how long after its rotation a refresh token
	// presented again is answered with its unused successor instead of
	// revoking the family (LINKSLOT_REFRESH_GRACE, default 30s, at most
	// 5m; docs/refresh-grace.md). Unlike the other fields, zero means
	// off, as LINKSLOT_REFRESH_GRACE=0 does.
	RefreshGrace time.Duration
	// ShutdownTimeout bounds graceful shutdown (LINKSLOT_SHUTDOWN_TIMEOUT, 15s).
	ShutdownTimeout time.Duration
	// RequestTimeout bounds the work of one HTTP request on either server,
	// database calls included (LINKSLOT_REQUEST_TIMEOUT, default 10s, the
	// PostgreSQL statement timeout; 1s to 5m). A request that outlasts it
	// answers a retryable error instead of holding the caller.
	RequestTimeout time.Duration
	// LogFormat is "text" or "json" (LINKSLOT_LOG_FORMAT, default text).
	LogFormat string
	// VarDir holds development files (LINKSLOT_VAR_DIR, default var).
	VarDir string
	// AdminToken authenticates the JSON admin API as a bearer token
	// (LINKSLOT_ADMIN_TOKEN, at least 16 characters; empty turns token
	// authentication off, leaving admin sessions only).
	AdminToken string
	// CIMDPolicy says which clients identified by a client ID metadata
	// document URL may link (LINKSLOT_CIMD_POLICY: registered, the
	// default; open; off). docs/reference.md §10.
	CIMDPolicy string
	// CIMDOpenScopes are the private scopes an unregistered URL client may
	// be granted under the open policy (LINKSLOT_CIMD_OPEN_SCOPES, default
	// "bookings:read bookings:write").
	CIMDOpenScopes []string
	// DCRPolicy says whether clients may register themselves through
	// dynamic client registration (LINKSLOT_DCR_POLICY: off, the default;
	// open). docs/reference.md §14, internal/dcr.
	DCRPolicy string
	// DCRScopes are the scopes a dynamically registered client may be
	// allowed (LINKSLOT_DCR_SCOPES, default "openid offline_access
	// bookings:read bookings:write"); a registration's scope is cut to them.
	DCRScopes []string
	// DCRRate is how many registrations one client address may make per
	// hour, counted by every replica together (LINKSLOT_DCR_RATE, default
	// 10).
	DCRRate int
	// TrustedProxies are the reverse proxies whose Forwarded or
	// X-Forwarded-For names the client (LINKSLOT_TRUSTED_PROXIES,
	// comma-separated CIDRs or addresses; default none: the TCP peer is the
	// client). See internal/clientaddr.
	TrustedProxies []netip.Prefix
	// Mail is LINKSLOT_SMTP_URL parsed: smtp://[user:pass@]host:port
	// (STARTTLS when offered), smtps://… (implicit TLS), or off. Unset in
	// development: messages are written to VarDir/mail as .eml files;
	// unset in production is refused.
	Mail mail.Settings
	// MailFrom is the From address (LINKSLOT_MAIL_FROM, default
	// "Linkslot <no-reply@ISSUER-HOST>").
	MailFrom string
	// OutboxLease is how long an outbox worker holds the messages it is
	// delivering (LINKSLOT_OUTBOX_LEASE, default 1m, 4s to 1h): a process
	// that dies holding some gives them up after it. A delivery is given at
	// most half of it.
	OutboxLease time.Duration
	// IDTokenAlg signs the ID tokens of clients that name no
	// id_token_signed_response_alg (LINKSLOT_ID_TOKEN_ALG: ES256, the
	// default, or RS256). ES256 because it costs a small fraction of an
	// RSA signature; OpenID's default, RS256, is served to every client that
	// asks for it (docs/id-tokens-and-redirects.md).
	IDTokenAlg string
}

// MailDir is where development e-mail is written (VarDir/mail).
func (c Config) MailDir() string { return filepath.Join(c.VarDir, "mail") }

// IssuerHost is the issuer's host name without a port.
func (c Config) IssuerHost() string {
	u, err := url.Parse(c.Issuer)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// DefaultOutboxLease is OutboxLease's default (outbox.DefaultLease).
const DefaultOutboxLease = time.Minute

// DefaultRequestTimeout is RequestTimeout's default: the PostgreSQL
// statement timeout sqlstore sets, so one slow statement ends the request.
const DefaultRequestTimeout = 10 * time.Second

// DefaultRefreshGrace and MaxRefreshGrace bound RefreshGrace.
const (
	DefaultRefreshGrace = 30 * time.Second
	MaxRefreshGrace     = 5 * time.Minute
)

// Getenv is the environment lookup; tests pass a map.
type Getenv func(string) string

// FromEnv reads and validates the configuration. Every problem found is
// reported in one error, one per line.
func FromEnv(getenv Getenv) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		DatabaseURL:  get("LINKSLOT_DATABASE_URL", "sqlite://var/linkslot.db"),
		AuthListen:   get("LINKSLOT_AUTH_LISTEN", "127.0.0.1:8080"),
		Issuer:       get("LINKSLOT_ISSUER", "http://127.0.0.1:8080"),
		RSListen:     get("LINKSLOT_RS_LISTEN", "127.0.0.1:8081"),
		Resource:     get("LINKSLOT_RESOURCE", "http://127.0.0.1:8081/mcp"),
		DemoPassword: get("LINKSLOT_DEMO_PASSWORD", "linkslot-demo"),
		LogFormat:    get("LINKSLOT_LOG_FORMAT", "text"),
		VarDir:       get("LINKSLOT_VAR_DIR", "var"),
		Production:   get("LINKSLOT_ENV", "development") == "production",
	}
	if e := get("LINKSLOT_ENV", "development"); e != "development" && e != "production" {
		bad("LINKSLOT_ENV must be development or production (got %q)", e)
	}
	if _, _, err := sqlstore.ParseURL(c.DatabaseURL, 0); err != nil {
		bad("LINKSLOT_DATABASE_URL: %v", err)
	}
	for _, l := range []struct{ name, v string }{{"LINKSLOT_AUTH_LISTEN", c.AuthListen}, {"LINKSLOT_RS_LISTEN", c.RSListen}} {
		if _, _, err := net.SplitHostPort(l.v); err != nil {
			bad("%s must be host:port (got %q)", l.name, l.v)
		}
	}
	if err := checkURL(c.Issuer, false, c.Production); err != nil {
		bad("LINKSLOT_ISSUER %v", err)
	}
	if err := checkURL(c.Resource, true, c.Production); err != nil {
		bad("LINKSLOT_RESOURCE %v", err)
	}
	c.Issuer = strings.TrimRight(c.Issuer, "/") // "http://h//" too: an issuer never ends with a slash
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("LINKSLOT_LOG_FORMAT must be text or json (got %q)", c.LogFormat)
	}
	c.AuthMetricsListen = get("LINKSLOT_AUTH_METRICS_LISTEN", "")
	c.RSMetricsListen = get("LINKSLOT_RS_METRICS_LISTEN", "")
	for _, l := range []struct{ name, v string }{{"LINKSLOT_AUTH_METRICS_LISTEN", c.AuthMetricsListen}, {"LINKSLOT_RS_METRICS_LISTEN", c.RSMetricsListen}} {
		if _, _, err := net.SplitHostPort(l.v); l.v != "" && err != nil {
			bad("%s must be host:port (got %q)", l.name, l.v)
		}
	}
	if get("LINKSLOT_METRICS_LISTEN", "") != "" {
		// One address for both servers cannot work where both run on one
		// host; refuse it rather than silently serve no metrics.
		bad("LINKSLOT_METRICS_LISTEN is no longer read: set LINKSLOT_AUTH_METRICS_LISTEN and LINKSLOT_RS_METRICS_LISTEN")
	}
	for _, o := range strings.Split(get("LINKSLOT_ALLOWED_ORIGINS", ""), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			bad("LINKSLOT_ALLOWED_ORIGINS: %q is not an origin (scheme://host[:port])", o)
			continue
		}
		c.AllowedOrigins = append(c.AllowedOrigins, o)
	}
	c.DBMaxConns = intVar(get, "LINKSLOT_DB_MAX_CONNS", 0, bad)
	c.RefreshIdle = durVar(get, "LINKSLOT_REFRESH_IDLE", 30*24*time.Hour, bad)
	c.RefreshAbsolute = durVar(get, "LINKSLOT_REFRESH_ABSOLUTE", 90*24*time.Hour, bad)
	c.ShutdownTimeout = durVar(get, "LINKSLOT_SHUTDOWN_TIMEOUT", 15*time.Second, bad)
	c.RequestTimeout = durVar(get, "LINKSLOT_REQUEST_TIMEOUT", DefaultRequestTimeout, bad)
	if c.RequestTimeout < time.Second || c.RequestTimeout > 5*time.Minute {
		bad("LINKSLOT_REQUEST_TIMEOUT must be between 1s and 5m (got %s)", c.RequestTimeout)
		c.RequestTimeout = DefaultRequestTimeout
	}
	c.RefreshGrace = graceVar(get, "LINKSLOT_REFRESH_GRACE", DefaultRefreshGrace, bad)
	if c.RefreshIdle > c.RefreshAbsolute {
		bad("LINKSLOT_REFRESH_IDLE (%s) must not exceed LINKSLOT_REFRESH_ABSOLUTE (%s)", c.RefreshIdle, c.RefreshAbsolute)
	}
	c.CIMDPolicy = get("LINKSLOT_CIMD_POLICY", string(cimd.PolicyRegistered))
	if _, err := cimd.ParsePolicy(c.CIMDPolicy); err != nil {
		bad("LINKSLOT_CIMD_POLICY %v", err)
	}
	c.CIMDOpenScopes = strings.Fields(get("LINKSLOT_CIMD_OPEN_SCOPES", "bookings:read bookings:write"))
	for _, s := range c.CIMDOpenScopes {
		if sc, ok := scope.Lookup(s); !ok || sc.Public {
			bad("LINKSLOT_CIMD_OPEN_SCOPES: %q is not a private scope (bookings:read, bookings:write)", s)
		}
	}
	c.DCRPolicy = get("LINKSLOT_DCR_POLICY", string(dcr.PolicyOff))
	if _, err := dcr.ParsePolicy(c.DCRPolicy); err != nil {
		bad("LINKSLOT_DCR_POLICY %v", err)
	}
	c.DCRScopes = strings.Fields(get("LINKSLOT_DCR_SCOPES", strings.Join(dcr.DefaultPolicyScopes, " ")))
	for _, s := range c.DCRScopes {
		if !scope.Known(s) {
			bad("LINKSLOT_DCR_SCOPES: %q is not a scope (openid, profile, email, offline_access, bookings:read, bookings:write)", s)
		}
	}
	if v := get("LINKSLOT_DCR_RATE", ""); v == "" {
		c.DCRRate = dcr.DefaultRate
	} else if n, err := strconv.Atoi(v); err != nil || n < 1 {
		bad("LINKSLOT_DCR_RATE must be a whole number of registrations per client address per hour, at least 1 (got %q)", v)
		c.DCRRate = dcr.DefaultRate
	} else {
		c.DCRRate = n
	}
	c.AdminToken = get("LINKSLOT_ADMIN_TOKEN", "")
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		bad("LINKSLOT_ADMIN_TOKEN must have at least 16 characters (or be unset)")
	} else if _, err := authheader.ParseBearer("Bearer " + c.AdminToken); c.AdminToken != "" && err != nil {
		// It travels as an RFC 6750 bearer token, parsed by internal/authheader.
		bad("LINKSLOT_ADMIN_TOKEN may hold only letters, digits and - . _ ~ + / (then = padding)")
	}
	var badProxies []string
	c.TrustedProxies, badProxies = clientaddr.ParsePrefixes(get("LINKSLOT_TRUSTED_PROXIES", ""))
	for _, b := range badProxies {
		bad("LINKSLOT_TRUSTED_PROXIES: %q is not a CIDR such as 10.0.0.0/8 or an address", b)
	}
	if key := get("LINKSLOT_SECRET_KEY", ""); key != "" {
		if len(key) < 32 {
			bad("LINKSLOT_SECRET_KEY must be at least 32 characters (use: openssl rand -hex 32)")
		}
		c.SecretKey = []byte(key)
	} else if c.Production {
		bad("LINKSLOT_SECRET_KEY is required when LINKSLOT_ENV=production (use: openssl rand -hex 32)")
	}
	if m, err := mail.ParseURL(getenv("LINKSLOT_SMTP_URL")); err != nil {
		bad("LINKSLOT_SMTP_URL %v", err)
	} else if m.Kind == mail.KindDir && c.Production {
		bad("LINKSLOT_SMTP_URL is required when LINKSLOT_ENV=production (smtp://host:port, smtps://host:port, or off to send no e-mail)")
	} else {
		c.Mail = m
	}
	c.MailFrom = get("LINKSLOT_MAIL_FROM", mail.DefaultFrom(c.IssuerHost()))
	if err := mail.CheckFrom(c.MailFrom); err != nil {
		bad("LINKSLOT_MAIL_FROM: %v", err)
	}
	c.OutboxLease = durVar(get, "LINKSLOT_OUTBOX_LEASE", DefaultOutboxLease, bad)
	if c.OutboxLease < 4*time.Second || c.OutboxLease > time.Hour {
		bad("LINKSLOT_OUTBOX_LEASE must be between 4s and 1h (got %s)", c.OutboxLease)
		c.OutboxLease = DefaultOutboxLease
	}
	c.IDTokenAlg = get("LINKSLOT_ID_TOKEN_ALG", clients.IDTokenES256)
	if c.IDTokenAlg != clients.IDTokenES256 && c.IDTokenAlg != clients.IDTokenRS256 {
		bad("LINKSLOT_ID_TOKEN_ALG must be ES256 or RS256 (got %q)", c.IDTokenAlg)
		c.IDTokenAlg = clients.IDTokenES256
	}
	if len(problems) > 0 {
		return c, errors.New("configuration problems:\n  - " + strings.Join(problems, "\n  - "))
	}
	return c, nil
}

// EnsureSecretKey loads the development secret key from VarDir/secret.key,
// creating it on first use, when no LINKSLOT_SECRET_KEY was given.
func (c *Config) EnsureSecretKey() error {
	if len(c.SecretKey) > 0 {
		return nil
	}
	path := filepath.Join(c.VarDir, "secret.key")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		c.SecretKey = []byte(strings.TrimSpace(string(b)))
		return nil
	}
	if err := os.MkdirAll(c.VarDir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", c.VarDir, err)
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return err
	}
	key := hex.EncodeToString(buf)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if os.IsExist(err) { // another process created it first
			b, rerr := os.ReadFile(path)
			if rerr == nil {
				c.SecretKey = []byte(strings.TrimSpace(string(b)))
				return nil
			}
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.WriteString(key + "\n"); err != nil {
		return err
	}
	c.SecretKey = []byte(key)
	return nil
}

func checkURL(raw string, needPath, production bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("must be an absolute http(s) URL (got %q)", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("must have no query or fragment (got %q)", raw)
	}
	if !needPath && strings.Trim(u.Path, "/") != "" {
		return fmt.Errorf("must have no path (got %q)", raw)
	}
	if production && u.Scheme != "https" {
		return fmt.Errorf("must be https in production (got %q)", raw)
	}
	return nil
}

func intVar(get func(string, string) string, k string, def int, bad func(string, ...any)) int {
	v := get(k, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		bad("%s must be a non-negative whole number (got %q)", k, v)
		return def
	}
	return n
}

func durVar(get func(string, string) string, k string, def time.Duration, bad func(string, ...any)) time.Duration {
	v := get(k, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		bad("%s must be a positive duration such as 30s or 720h (got %q)", k, v)
		return def
	}
	return d
}

// graceVar reads LINKSLOT_REFRESH_GRACE: a duration from 0 (off) to
// MaxRefreshGrace.
func graceVar(get func(string, string) string, k string, def time.Duration, bad func(string, ...any)) time.Duration {
	v := get(k, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxRefreshGrace {
		bad("%s must be a duration from 0 (off) to 5m, such as 30s (got %q)", k, v)
		return def
	}
	return d
}
