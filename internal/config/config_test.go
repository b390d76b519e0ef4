package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "sqlite://var/linkslot.db" || c.AuthListen != "127.0.0.1:8080" || c.RSListen != "127.0.0.1:8081" ||
		c.Issuer != "http://127.0.0.1:8080" || c.Resource != "http://127.0.0.1:8081/mcp" || c.LogFormat != "text" ||
		c.Production || c.RefreshIdle != 720*time.Hour || c.RefreshAbsolute != 2160*time.Hour || c.ShutdownTimeout != 15*time.Second ||
		c.RequestTimeout != 10*time.Second {
		t.Errorf("defaults = %+v", c)
	}
}

func TestValid(t *testing.T) {
	c, err := FromEnv(env(map[string]string{
		"LINKSLOT_ENV":                 "production",
		"LINKSLOT_DATABASE_URL":        "postgres://u:p@db:5432/linkslot",
		"LINKSLOT_ISSUER":              "https://auth.example.com/",
		"LINKSLOT_RESOURCE":            "https://api.example.com/mcp",
		"LINKSLOT_SECRET_KEY":          strings.Repeat("k", 32),
		"LINKSLOT_ALLOWED_ORIGINS":     "https://a.example, https://b.example:8443",
		"LINKSLOT_DB_MAX_CONNS":        "32",
		"LINKSLOT_REFRESH_IDLE":        "24h",
		"LINKSLOT_AUTH_METRICS_LISTEN": "127.0.0.1:9090",
		"LINKSLOT_RS_METRICS_LISTEN":   "127.0.0.1:9091",
		"LINKSLOT_LOG_FORMAT":          "json",
		"LINKSLOT_SHUTDOWN_TIMEOUT":    "5s",
		"LINKSLOT_REQUEST_TIMEOUT":     "30s",
		"LINKSLOT_TRUSTED_PROXIES":     "10.0.0.0/8, 192.0.2.1,fd00::/8",
		"LINKSLOT_SMTP_URL":            "smtps://mailer:pw@smtp.example.com",
		"LINKSLOT_MAIL_FROM":           "Bookings <bookings@example.com>",
		"LINKSLOT_OUTBOX_LEASE":        "20s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Production || c.Issuer != "https://auth.example.com" || len(c.AllowedOrigins) != 2 || c.DBMaxConns != 32 ||
		c.RefreshIdle != 24*time.Hour || c.LogFormat != "json" || c.ShutdownTimeout != 5*time.Second || c.RequestTimeout != 30*time.Second || string(c.SecretKey) != strings.Repeat("k", 32) ||
		c.AuthMetricsListen != "127.0.0.1:9090" || c.RSMetricsListen != "127.0.0.1:9091" ||
		len(c.TrustedProxies) != 3 || c.TrustedProxies[1].String() != "192.0.2.1/32" ||
		c.Mail.Kind != "smtp" || !c.Mail.Implicit || c.Mail.Port != 465 || c.Mail.Username != "mailer" || c.MailFrom != "Bookings <bookings@example.com>" ||
		c.OutboxLease != 20*time.Second {
		t.Errorf("config = %+v", c)
	}
}

// TestAllProblemsTogether: every bad variable is reported in one error, one
// line each, and a database password never appears in it.
func TestAllProblemsTogether(t *testing.T) {
	bad := map[string]string{
		"LINKSLOT_ENV":                 "staging",
		"LINKSLOT_DATABASE_URL":        "mysql://root:hunter2@db/x",
		"LINKSLOT_AUTH_LISTEN":         "8080",
		"LINKSLOT_RS_LISTEN":           "nope",
		"LINKSLOT_ISSUER":              "ftp://x",
		"LINKSLOT_RESOURCE":            "http://127.0.0.1:8081/mcp?x=1",
		"LINKSLOT_LOG_FORMAT":          "xml",
		"LINKSLOT_AUTH_METRICS_LISTEN": "9090",
		"LINKSLOT_RS_METRICS_LISTEN":   "host",
		"LINKSLOT_METRICS_LISTEN":      "127.0.0.1:9090",
		"LINKSLOT_ALLOWED_ORIGINS":     "https://ok.example,not-an-origin",
		"LINKSLOT_DB_MAX_CONNS":        "-1",
		"LINKSLOT_REFRESH_IDLE":        "forever",
		"LINKSLOT_SHUTDOWN_TIMEOUT":    "0s",
		"LINKSLOT_REQUEST_TIMEOUT":     "soon",
		"LINKSLOT_SECRET_KEY":          "short",
		"LINKSLOT_TRUSTED_PROXIES":     "10.0.0.0/8, ingress",
	}
	_, err := FromEnv(env(bad))
	if err == nil {
		t.Fatal("FromEnv accepted bad configuration")
	}
	msg := err.Error()
	for k := range bad {
		if !strings.Contains(msg, k) {
			t.Errorf("error does not mention %s:\n%s", k, msg)
		}
	}
	if n := strings.Count(msg, "\n  - "); n != len(bad) {
		t.Errorf("error lists %d problems, want %d:\n%s", n, len(bad), msg)
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error shows the database password:\n%s", msg)
	}
}

func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"production needs a secret", map[string]string{"LINKSLOT_ENV": "production", "LINKSLOT_ISSUER": "https://a.example", "LINKSLOT_RESOURCE": "https://b.example/mcp"}, "LINKSLOT_SECRET_KEY is required"},
		{"production needs https", map[string]string{"LINKSLOT_ENV": "production", "LINKSLOT_SECRET_KEY": strings.Repeat("k", 32)}, "must be https in production"},
		{"issuer has no path", map[string]string{"LINKSLOT_ISSUER": "http://127.0.0.1:8080/auth"}, "LINKSLOT_ISSUER must have no path"},
		{"idle above absolute", map[string]string{"LINKSLOT_REFRESH_IDLE": "100h", "LINKSLOT_REFRESH_ABSOLUTE": "10h"}, "must not exceed"},
		{"malformed postgres URL", map[string]string{"LINKSLOT_DATABASE_URL": "postgres://u:hunter2@[::1/x"}, "LINKSLOT_DATABASE_URL"},
		{"request timeout too short", map[string]string{"LINKSLOT_REQUEST_TIMEOUT": "10ms"}, "LINKSLOT_REQUEST_TIMEOUT must be between 1s and 5m"},
		{"request timeout too long", map[string]string{"LINKSLOT_REQUEST_TIMEOUT": "1h"}, "LINKSLOT_REQUEST_TIMEOUT must be between 1s and 5m"},
		{"request timeout not a duration", map[string]string{"LINKSLOT_REQUEST_TIMEOUT": "10"}, "LINKSLOT_REQUEST_TIMEOUT must be a positive duration"},
		{"outbox lease too short", map[string]string{"LINKSLOT_OUTBOX_LEASE": "1s"}, "LINKSLOT_OUTBOX_LEASE must be between 4s and 1h"},
		{"empty sqlite path", map[string]string{"LINKSLOT_DATABASE_URL": "sqlite://"}, "no file path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromEnv(env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromEnv = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestEnsureSecretKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var")
	c := Config{VarDir: dir}
	if err := c.EnsureSecretKey(); err != nil {
		t.Fatal(err)
	}
	if len(c.SecretKey) < 32 {
		t.Fatalf("generated key has %d bytes", len(c.SecretKey))
	}
	fi, err := os.Stat(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("secret.key mode %v, want 0600", fi.Mode().Perm())
	}
	again := Config{VarDir: dir}
	if err := again.EnsureSecretKey(); err != nil {
		t.Fatal(err)
	}
	if string(again.SecretKey) != string(c.SecretKey) {
		t.Error("second start generated a different key")
	}
	given := Config{VarDir: dir, SecretKey: []byte("given")}
	if err := given.EnsureSecretKey(); err != nil || string(given.SecretKey) != "given" {
		t.Errorf("EnsureSecretKey replaced a configured key: %q, %v", given.SecretKey, err)
	}
}

func TestCIMDSettings(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.CIMDPolicy != "registered" || strings.Join(c.CIMDOpenScopes, " ") != "bookings:read bookings:write" {
		t.Fatalf("defaults: %q %v %v", c.CIMDPolicy, c.CIMDOpenScopes, err)
	}
	c, err = FromEnv(env(map[string]string{"LINKSLOT_CIMD_POLICY": "open", "LINKSLOT_CIMD_OPEN_SCOPES": "bookings:read"}))
	if err != nil || c.CIMDPolicy != "open" || strings.Join(c.CIMDOpenScopes, " ") != "bookings:read" {
		t.Fatalf("open: %q %v %v", c.CIMDPolicy, c.CIMDOpenScopes, err)
	}
	_, err = FromEnv(env(map[string]string{"LINKSLOT_CIMD_POLICY": "sometimes", "LINKSLOT_CIMD_OPEN_SCOPES": "openid bookings:admin"}))
	for _, want := range []string{"LINKSLOT_CIMD_POLICY must be registered, open or off", `"openid" is not a private scope`, `"bookings:admin" is not a private scope`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// TestDCRSettings: dynamic registration is off unless asked for, and its
// scopes and rate are checked, each bad value named.
func TestDCRSettings(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.DCRPolicy != "off" || strings.Join(c.DCRScopes, " ") != "openid offline_access bookings:read bookings:write" || c.DCRRate != 10 {
		t.Fatalf("defaults: %q %v %d %v", c.DCRPolicy, c.DCRScopes, c.DCRRate, err)
	}
	c, err = FromEnv(env(map[string]string{"LINKSLOT_DCR_POLICY": "open", "LINKSLOT_DCR_SCOPES": "openid bookings:read", "LINKSLOT_DCR_RATE": "3"}))
	if err != nil || c.DCRPolicy != "open" || strings.Join(c.DCRScopes, " ") != "openid bookings:read" || c.DCRRate != 3 {
		t.Fatalf("open: %q %v %d %v", c.DCRPolicy, c.DCRScopes, c.DCRRate, err)
	}
	for _, rate := range []string{"0", "-1", "ten"} {
		_, err = FromEnv(env(map[string]string{"LINKSLOT_DCR_POLICY": "registered", "LINKSLOT_DCR_SCOPES": "openid bookings:admin", "LINKSLOT_DCR_RATE": rate}))
		for _, want := range []string{`LINKSLOT_DCR_POLICY must be off or open (got "registered")`, `LINKSLOT_DCR_SCOPES: "bookings:admin" is not a scope`,
			`LINKSLOT_DCR_RATE must be a whole number of registrations per client address per hour, at least 1 (got "` + rate + `")`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v does not say %q", err, want)
			}
		}
	}
}

// TestAdminTokenIsABearerToken: the admin token travels in an
// Authorization header, so it must be an RFC 6750 b64token.
func TestAdminTokenIsABearerToken(t *testing.T) {
	for tok, ok := range map[string]bool{
		"abcdefghijklmnop": true, "A1-._~+/A1-._~+/==": true,
		"abcdefgh ijklmnop": false, "abcdefgh!ijklmnop": false, "short": false,
	} {
		_, err := FromEnv(env(map[string]string{"LINKSLOT_ADMIN_TOKEN": tok}))
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "LINKSLOT_ADMIN_TOKEN")) {
			t.Errorf("admin token %q: %v", tok, err)
		}
	}
}

// TestProductionNeedsSMTP: a production start without LINKSLOT_SMTP_URL is
// refused with one clear line; "off" is accepted and sends nothing; in
// development the default is the .eml folder and From names the issuer host.
func TestProductionNeedsSMTP(t *testing.T) {
	prod := map[string]string{"LINKSLOT_ENV": "production", "LINKSLOT_ISSUER": "https://auth.example.com:8443",
		"LINKSLOT_RESOURCE": "https://api.example.com/mcp", "LINKSLOT_SECRET_KEY": strings.Repeat("k", 32)}
	_, err := FromEnv(env(prod))
	if err == nil {
		t.Fatal("production without LINKSLOT_SMTP_URL was accepted")
	}
	lines := strings.Split(err.Error(), "\n  - ")
	if len(lines) != 2 || !strings.Contains(lines[1], "LINKSLOT_SMTP_URL is required when LINKSLOT_ENV=production") || strings.Contains(lines[1], "\n") {
		t.Fatalf("want exactly one problem line naming LINKSLOT_SMTP_URL, got:\n%s", err)
	}
	prod["LINKSLOT_SMTP_URL"] = "off"
	c, err := FromEnv(env(prod))
	if err != nil || c.Mail.Kind != "off" {
		t.Fatalf("off: %+v, %v", c.Mail, err)
	}
	if c.MailFrom != "Linkslot <no-reply@auth.example.com>" {
		t.Fatalf("default From = %q", c.MailFrom)
	}
	c, err = FromEnv(env(nil))
	if err != nil || c.Mail.Kind != "dir" || c.MailDir() != filepath.Join("var", "mail") {
		t.Fatalf("development default: %+v %q, %v", c.Mail, c.MailDir(), err)
	}
	for _, bad := range []string{"http://smtp.example.com", "smtp://", "smtp://u:hunter2@h:99999", "smtp://h:25/path"} {
		_, err := FromEnv(env(map[string]string{"LINKSLOT_SMTP_URL": bad}))
		if err == nil || !strings.Contains(err.Error(), "LINKSLOT_SMTP_URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := FromEnv(env(map[string]string{"LINKSLOT_MAIL_FROM": "not an address"})); err == nil || !strings.Contains(err.Error(), "LINKSLOT_MAIL_FROM") {
		t.Errorf("bad From accepted: %v", err)
	}
}
