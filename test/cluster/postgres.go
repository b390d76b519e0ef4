package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Postgres is a throwaway PostgreSQL server owned by one test.
type Postgres struct {
	t     testing.TB
	bin   string
	dir   string
	runas []string
	Port  int
	// URL reaches the "postgres" database as the superuser linkslot.
	URL string
}

// FindPGBin returns the folder of initdb, or "".
func FindPGBin() string {
	if d := os.Getenv("LINKSLOT_TEST_PG_BIN"); d != "" {
		return d
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) > 0 {
		return filepath.Dir(m[len(m)-1])
	}
	return ""
}

// skipOrFail skips a test that needs PostgreSQL, or fails it under CI.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s", why)
	}
	t.Skip(why)
}

// StartPostgres initializes and starts a dedicated PostgreSQL in a temporary
// folder; t.Cleanup stops it and removes the folder.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := FindPGBin()
	if bin == "" {
		skipOrFail(t, "initdb not found (set LINKSLOT_TEST_PG_BIN)")
	}
	dir, err := os.MkdirTemp("", "linkslot-cluster-pg.")
	if err != nil {
		t.Fatal(err)
	}
	p := &Postgres{t: t, bin: bin, dir: dir, Port: freePort(t)}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		if ra := os.Getenv("LINKSLOT_TEST_PG_RUNAS"); ra != "" {
			p.runas = strings.Fields(ra)
		} else {
			if _, err := user.Lookup("linkslot-pg"); err != nil {
				_ = exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "linkslot-pg").Run()
			}
			p.runas = []string{"runuser", "-u", "linkslot-pg", "--"}
		}
		u := p.runas[len(p.runas)-2]
		if out, err := exec.Command("chown", u, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v %s", dir, err, out)
		}
	}
	os.Chmod(dir, 0o700)
	t.Cleanup(func() {
		p.pgctl("-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	if out, err := p.cmd(filepath.Join(bin, "initdb"), "-D", p.data(), "-U", "linkslot", "--auth=trust", "-E", "UTF8",
		"--locale=C.UTF-8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.URL = fmt.Sprintf("postgres://linkslot@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
	p.Start()
	return p
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

func (p *Postgres) cmd(name string, args ...string) *exec.Cmd {
	all := append(append([]string{}, p.runas...), name)
	all = append(all, args...)
	return exec.Command(all[0], all[1:]...)
}

func (p *Postgres) pgctl(args ...string) ([]byte, error) {
	a := append([]string{"-D", p.data()}, args...)
	return p.cmd(filepath.Join(p.bin, "pg_ctl"), a...).CombinedOutput()
}

// Start starts the server and waits until it accepts connections.
func (p *Postgres) Start() {
	p.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on", p.Port, p.dir)
	if out, err := p.pgctl("-l", filepath.Join(p.dir, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		p.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server; fast mode disconnects every client at once, like
// a database failover or a crash seen from the application.
func (p *Postgres) Stop() {
	p.t.Helper()
	if out, err := p.pgctl("-m", "fast", "-w", "stop"); err != nil {
		p.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitTCP waits until addr accepts a connection.
func waitTCP(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
