package testkit

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Radicale is a real CalDAV server (Debian's radicale package) started for
// a test: bound to 127.0.0.1 on a free port, its configuration, users and
// collections in a temporary folder, one user with one calendar.
type Radicale struct {
	t        testing.TB
	dir      string
	Port     int
	User     string
	Password string
	cmd      *exec.Cmd
}

// StartRadicale starts Radicale with user "owner" and the calendar
// collection /owner/work/. It skips the test when radicale is not
// installed, and fails it under CI=true (.ci/run installs it).
func StartRadicale(t testing.TB) *Radicale {
	t.Helper()
	bin, err := exec.LookPath("radicale")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("radicale is not installed: CI requires the CalDAV tests (.ci/run installs Debian's radicale)")
		}
		t.Skip("radicale is not installed (apt-get install radicale); the CalDAV tests need a real CalDAV server")
	}
	r := &Radicale{t: t, dir: t.TempDir(), User: "owner", Password: "s3cret-calendar-pw"}
	// htpasswd in plain text: the server's own test fixture.
	if err := os.WriteFile(filepath.Join(r.dir, "users"), []byte(r.User+":"+r.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The calendar collection, created on disk as Radicale's filesystem
	// storage keeps it.
	col := filepath.Join(r.dir, "collections", "collection-root", r.User, "work")
	if err := os.MkdirAll(col, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(col, ".Radicale.props"), []byte(`{"tag": "VCALENDAR", "D:displayname": "Work"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Port = freePort(t)
	conf := fmt.Sprintf(`[server]
hosts = 127.0.0.1:%d
max_content_length = 100000000
timeout = 30
[auth]
type = htpasswd
htpasswd_filename = %s
htpasswd_encryption = plain
delay = 0
[rights]
type = owner_only
[storage]
filesystem_folder = %s
[logging]
level = warning
[web]
type = none
`, r.Port, filepath.Join(r.dir, "users"), filepath.Join(r.dir, "collections"))
	if err := os.WriteFile(filepath.Join(r.dir, "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "--config", filepath.Join(r.dir, "config"))
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// CollectionDir is the folder where Radicale keeps the calendar's objects,
// one file each (benchmarks fill it directly).
func (r *Radicale) CollectionDir() string {
	return filepath.Join(r.dir, "collections", "collection-root", r.User, "work")
}

// URL is the calendar collection's URL.
func (r *Radicale) URL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/%s/work/", r.Port, r.User)
}

// Start starts (or restarts) the server and waits until it answers.
func (r *Radicale) Start() {
	r.t.Helper()
	if r.cmd == nil || r.cmd.ProcessState != nil || r.cmd.Process != nil {
		r.cmd = exec.Command(r.cmd.Path, r.cmd.Args[1:]...)
	}
	r.cmd.Stdout, r.cmd.Stderr = os.Stderr, os.Stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start radicale: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/.web/", r.Port))
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("radicale did not answer on port %d within 20 s", r.Port)
}

// Stop stops the server (a test then sees a calendar that is down).
func (r *Radicale) Stop() {
	if r.cmd == nil || r.cmd.Process == nil || r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p, _ := strconv.Atoi(fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	return p
}
