package cluster

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestStartupTime starts each server on an empty database that has just
// been migrated, on SQLite and on PostgreSQL, and logs the time from the
// process start to its first 200 on /readyz (issue 10: "both servers start
// in under one second on an empty database after migrations"). Like every
// correctness test it asserts no speed: only that each server becomes
// ready. The figures are in the log:
//
//	startup: authserver sqlite 180ms, postgres 210ms; resourceserver …
func TestStartupTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both servers and starts them as processes")
	}
	bins := buildBinaries(t)
	type figure struct{ migrate, as, rs time.Duration }
	figures := map[string]figure{}
	var mu sync.Mutex
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dbURL := sqltest.MustURL(t, backend) // empty; skips postgres when not configured
			asPort, rsPort := freePort(t), freePort(t)
			issuer := fmt.Sprintf("http://127.0.0.1:%d", asPort)
			env := []string{
				"LINKSLOT_DATABASE_URL=" + dbURL,
				"LINKSLOT_ISSUER=" + issuer,
				"LINKSLOT_RESOURCE=" + fmt.Sprintf("http://127.0.0.1:%d/mcp", rsPort),
				"LINKSLOT_SECRET_KEY=startup-" + randHex(24),
				"LINKSLOT_LOG_FORMAT=json",
				"LINKSLOT_VAR_DIR=" + t.TempDir(),
				"LINKSLOT_SHUTDOWN_TIMEOUT=2s",
				"PATH=" + os.Getenv("PATH"),
				"HOME=" + os.Getenv("HOME"),
			}
			t0 := time.Now()
			migrate(t, bins, env)
			var f figure
			f.migrate = time.Since(t0)
			as := newProcess("authserver", bins, "authserver", asPort, env, fmt.Sprintf("LINKSLOT_AUTH_LISTEN=127.0.0.1:%d", asPort))
			rs := newProcess("resourceserver", bins, "resourceserver", rsPort, env, fmt.Sprintf("LINKSLOT_RS_LISTEN=127.0.0.1:%d", rsPort))
			// The authorization server first (it creates the signing key on
			// an empty database), then the resource server beside it, as a
			// fresh deployment starts.
			f.as = timeToReady(t, as)
			f.rs = timeToReady(t, rs)
			t.Logf("%s: migrate %s; authserver ready after %s; resourceserver ready after %s", backend, ms(f.migrate), ms(f.as), ms(f.rs))
			mu.Lock()
			figures[backend] = f
			mu.Unlock()
		})
	}
	var as, rs []string
	for _, backend := range []string{"sqlite", "postgres"} {
		if f, ok := figures[backend]; ok {
			as = append(as, backend+" "+ms(f.as))
			rs = append(rs, backend+" "+ms(f.rs))
		}
	}
	t.Logf("startup (process start to first 200 on /readyz, empty database after migrations): authserver %s; resourceserver %s",
		strings.Join(as, ", "), strings.Join(rs, ", "))
}

// timeToReady starts p and returns the time from just before the process
// starts to its first 200 on /readyz, polled every 2 ms. The bound of 60 s
// only catches a server that never becomes ready.
func timeToReady(t *testing.T, p *Proc) time.Duration {
	t.Helper()
	p.Base = "http://" + p.Addr
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	p.start(t)
	for time.Since(start) < 60*time.Second {
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready: %s", p.Name, p.LogTail(4000))
		default:
		}
		resp, err := hc.Get(p.Base + "/readyz")
		if err == nil {
			readAll(resp)
			if resp.StatusCode == http.StatusOK {
				return time.Since(start)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s not ready after 60 s: %s", p.Name, p.LogTail(4000))
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds()) }

// TestProductionStartNeedsSMTP: each server started in production without
// LINKSLOT_SMTP_URL exits before listening, with one clear line naming the
// variable (docs/reference.md §11) and nothing else wrong.
func TestProductionStartNeedsSMTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both servers and starts them as processes")
	}
	bins := buildBinaries(t)
	dir := t.TempDir()
	base := []string{
		"LINKSLOT_ENV=production",
		"LINKSLOT_DATABASE_URL=sqlite://" + filepath.Join(dir, "prod.db"),
		"LINKSLOT_ISSUER=https://auth.linkslot.test",
		"LINKSLOT_RESOURCE=https://mcp.linkslot.test/mcp",
		"LINKSLOT_SECRET_KEY=" + strings.Repeat("k", 32),
		"LINKSLOT_VAR_DIR=" + dir,
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
	}
	const want = "LINKSLOT_SMTP_URL is required when LINKSLOT_ENV=production"
	for _, bin := range []string{"authserver", "resourceserver"} {
		cmd := exec.Command(filepath.Join(bins, bin), "serve")
		cmd.Env = append(append([]string{}, base...), "LINKSLOT_AUTH_LISTEN=127.0.0.1:0", "LINKSLOT_RS_LISTEN=127.0.0.1:0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "LINKSLOT_SMTP_URL") {
				lines = append(lines, l)
			}
		}
		if err == nil || len(lines) != 1 || !strings.Contains(lines[0], want) || strings.Count(out.String(), "\n  - ") != 1 {
			t.Errorf("%s serve in production without an SMTP URL: %v, output:\n%s", bin, err, out.String())
			continue
		}
		t.Logf("%s: %v; %s", bin, err, strings.TrimSpace(lines[0]))
	}
}
