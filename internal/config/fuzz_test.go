package config

import (
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fuzzEnvKeys are the variables FuzzFromEnv sets, in the order of its
// arguments.
var fuzzEnvKeys = []string{"LINKSLOT_DATABASE_URL", "LINKSLOT_AUTH_LISTEN", "LINKSLOT_ISSUER", "LINKSLOT_RS_LISTEN",
	"LINKSLOT_RESOURCE", "LINKSLOT_ENV", "LINKSLOT_LOG_FORMAT", "LINKSLOT_AUTH_METRICS_LISTEN", "LINKSLOT_ALLOWED_ORIGINS",
	"LINKSLOT_DB_MAX_CONNS", "LINKSLOT_REFRESH_IDLE", "LINKSLOT_REFRESH_ABSOLUTE", "LINKSLOT_SHUTDOWN_TIMEOUT",
	"LINKSLOT_ADMIN_TOKEN", "LINKSLOT_SECRET_KEY", "LINKSLOT_REQUEST_TIMEOUT"}

// envOf writes c back as the variables that configure it; variables it
// does not model keep their value from base.
func envOf(c Config, base map[string]string) map[string]string {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	mode := "development"
	if c.Production {
		mode = "production"
	}
	for k, v := range map[string]string{
		"LINKSLOT_DATABASE_URL": c.DatabaseURL, "LINKSLOT_AUTH_LISTEN": c.AuthListen, "LINKSLOT_ISSUER": c.Issuer,
		"LINKSLOT_RS_LISTEN": c.RSListen, "LINKSLOT_RESOURCE": c.Resource, "LINKSLOT_ENV": mode,
		"LINKSLOT_LOG_FORMAT": c.LogFormat, "LINKSLOT_AUTH_METRICS_LISTEN": c.AuthMetricsListen, "LINKSLOT_RS_METRICS_LISTEN": c.RSMetricsListen,
		"LINKSLOT_ALLOWED_ORIGINS": strings.Join(c.AllowedOrigins, ","), "LINKSLOT_DB_MAX_CONNS": strconv.Itoa(c.DBMaxConns),
		"LINKSLOT_REFRESH_IDLE": c.RefreshIdle.String(), "LINKSLOT_REFRESH_ABSOLUTE": c.RefreshAbsolute.String(),
		"LINKSLOT_SHUTDOWN_TIMEOUT": c.ShutdownTimeout.String(), "LINKSLOT_ADMIN_TOKEN": c.AdminToken,
		"LINKSLOT_SECRET_KEY": string(c.SecretKey), "LINKSLOT_DEMO_PASSWORD": c.DemoPassword, "LINKSLOT_VAR_DIR": c.VarDir,
	} {
		env[k] = v
	}
	return env
}

// FuzzFromEnv: FromEnv never panics; an accepted configuration keeps its
// documented invariants and re-validates: written back as variables it is
// accepted again as the same configuration.
func FuzzFromEnv(f *testing.F) {
	f.Add("", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "")
	f.Add("sqlite://var/x.db", "127.0.0.1:8080", "https://auth.example.com", "127.0.0.1:8081", "https://mcp.example.com/mcp",
		"production", "json", "127.0.0.1:9090", "https://app.example.com, http://localhost:3000", "16", "720h", "2160h", "15s",
		"0123456789abcdef", "0123456789abcdef0123456789abcdef", "10s")
	f.Add("postgres://u:p@127.0.0.1:5432/db", ":8080", "http://127.0.0.1:8080/", "[::1]:8081", "http://127.0.0.1:8081/mcp",
		"development", "text", "", ",,", "0", "1h", "1h", "1ns", "", "", "1s")
	f.Add("mysql://x", "8080", "ftp://x", "x", "http://x?y", "staging", "xml", "nope", "x", "-1", "0s", "-1h", "1y", "short", "short", "10m")
	f.Add("sqlite://var/x.db", "127.0.0.1:8080", "http://127.0.0.1:8080//", "127.0.0.1:8081", "http://127.0.0.1:8081/mcp#x",
		"production", "text", "", "https://a.example/path", "9999999999999999999999", "720h", "1h", "1m", "", "", "")
	f.Fuzz(func(t *testing.T, db, authListen, issuer, rsListen, resource, mode, logFormat, metrics, origins,
		maxConns, idle, absolute, shutdown, adminToken, secret, requestTimeout string) {
		vals := []string{db, authListen, issuer, rsListen, resource, mode, logFormat, metrics, origins,
			maxConns, idle, absolute, shutdown, adminToken, secret, requestTimeout}
		env := map[string]string{}
		for i, k := range fuzzEnvKeys {
			env[k] = vals[i]
		}
		c, err := FromEnv(func(k string) string { return env[k] })
		if err != nil {
			if !strings.HasPrefix(err.Error(), "configuration problems:\n  - ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		for _, u := range []string{c.Issuer, c.Resource} {
			p, err := url.Parse(u)
			if err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") || p.RawQuery != "" || p.Fragment != "" {
				t.Fatalf("accepted URL %q", u)
			}
			if c.Production && p.Scheme != "https" {
				t.Fatalf("production with %q", u)
			}
		}
		if strings.HasSuffix(c.Issuer, "/") {
			t.Fatalf("accepted issuer %q ends with a slash (token iss would not match discovery)", c.Issuer)
		}
		for _, l := range []string{c.AuthListen, c.RSListen} {
			if _, _, err := net.SplitHostPort(l); err != nil {
				t.Fatalf("accepted listen address %q", l)
			}
		}
		if c.Production && len(c.SecretKey) < 32 || len(c.SecretKey) > 0 && len(c.SecretKey) < 32 {
			t.Fatalf("accepted a secret key of %d bytes (production %v)", len(c.SecretKey), c.Production)
		}
		if c.RefreshIdle <= 0 || c.RefreshIdle > c.RefreshAbsolute || c.ShutdownTimeout <= 0 || c.DBMaxConns < 0 {
			t.Fatalf("accepted durations/limits %+v", c)
		}
		if c.AdminToken != "" && len(c.AdminToken) < 16 || c.LogFormat != "text" && c.LogFormat != "json" {
			t.Fatalf("accepted admin token/log format %+v", c)
		}
		c2, err := FromEnv(func(k string) string { return envOf(c, env)[k] })
		if err != nil {
			t.Fatalf("accepted configuration does not re-validate: %v\n%+v", err, c)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("re-validated configuration differs:\n%+v\n%+v", c, c2)
		}
	})
}
