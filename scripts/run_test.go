// Package scripts_test holds the tests of the shell scripts beside it.
package scripts_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/testkit"
)

// TestRunTellsTheTruth drives scripts/run (make run) with a temporary
// database, var folder and ports: with another server already on either
// address — one that even answers /readyz, as a first `make run` would —
// it exits non-zero naming the server and the address and never prints
// "running"; with both addresses free it starts both, prints the banner
// with the development mailbox, and stops on SIGINT (docs/reference.md §15).
func TestRunTellsTheTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both servers")
	}
	bin := buildServers(t)
	dir := t.TempDir()
	env := []string{
		"BIN=" + bin,
		"TMPDIR=" + dir,
		"LINKSLOT_DATABASE_URL=sqlite://" + filepath.Join(dir, "linkslot.db"),
		"LINKSLOT_VAR_DIR=" + filepath.Join(dir, "var"),
		"LINKSLOT_SECRET_KEY=0123456789abcdef0123456789abcdef",
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LINKSLOT_") && !strings.HasPrefix(kv, "BIN=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	ports := func() (auth, rs string) { return freeAddr(t), freeAddr(t) }
	withAddrs := func(auth, rs string) []string {
		return append(env[:len(env):len(env)],
			"LINKSLOT_AUTH_LISTEN="+auth, "LINKSLOT_ISSUER=http://"+auth,
			"LINKSLOT_RS_LISTEN="+rs, "LINKSLOT_RESOURCE=http://"+rs+"/mcp")
	}

	for _, tt := range []struct{ name, taken, variable string }{
		{"authorization server", "auth", "LINKSLOT_AUTH_LISTEN"},
		{"resource server", "rs", "LINKSLOT_RS_LISTEN"},
	} {
		t.Run(tt.name+" address taken", func(t *testing.T) {
			auth, rs := ports()
			addr := map[string]string{"auth": auth, "rs": rs}[tt.taken]
			occupy(t, addr)
			code, out := runScript(t, withAddrs(auth, rs), nil)
			want := fmt.Sprintf("run: the %s (%s, %s) did not start", tt.name, addr, tt.variable)
			if code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "cannot listen on "+addr) || strings.Contains(out, "Linkslot is running") {
				t.Errorf("exit %d, output:\n%s\nwant a non-zero exit, %q and no banner", code, out, want)
			}
		})
	}

	t.Run("bad configuration", func(t *testing.T) {
		auth, rs := ports()
		code, out := runScript(t, append(withAddrs(auth, rs), "LINKSLOT_LOG_FORMAT=xml"), nil)
		if code == 0 || !strings.Contains(out, "LINKSLOT_LOG_FORMAT must be text or json") || !strings.Contains(out, "nothing was started") || strings.Contains(out, "Linkslot is running") {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})

	t.Run("both start", func(t *testing.T) {
		auth, rs := ports()
		code, out := runScript(t, withAddrs(auth, rs), func(out *testkit.SyncBuffer, p *os.Process) {
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(out.String(), "Ctrl-C stops both servers.") {
				if time.Now().After(deadline) {
					t.Errorf("no banner within 60 s:\n%s", out.String())
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, a := range []string{auth, rs} {
				res, err := http.Get("http://" + a + "/readyz")
				if err != nil || res.StatusCode != http.StatusOK {
					t.Errorf("GET %s/readyz after the banner: %v %v", a, res, err)
				} else {
					res.Body.Close()
				}
			}
			_ = p.Signal(os.Interrupt)
		})
		for _, want := range []string{"Linkslot is running.", "listening on " + auth, "listening on " + rs, "http://" + auth + "/dev/mail",
			"owner@example.com", "staff@example.com", "http://" + auth + "/business"} {
			if !strings.Contains(out, want) {
				t.Errorf("banner lacks %q:\n%s", want, out)
			}
		}
		if code != 0 {
			t.Errorf("exit %d after Ctrl-C, want 0:\n%s", code, out)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "linkslot-run.*")); len(left) != 0 {
			t.Errorf("ready files left behind: %v", left)
		}
	})
}

// runScript runs scripts/run in its own process group with env; during,
// when set, is called while it runs. It returns the exit status and the
// combined output, and kills whatever the script left.
func runScript(t *testing.T, env []string, during func(*testkit.SyncBuffer, *os.Process)) (int, string) {
	t.Helper()
	cmd := exec.Command("./run")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if during != nil {
		during(out, cmd.Process)
	}
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("scripts/run still running after 90 s:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// occupy puts a server on addr that answers everything with 200, as a
// Linkslot already running there would answer /readyz.
func occupy(t *testing.T, addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"status":"ready"}`) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func buildServers(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "linkslot-run-bin.")
		for _, name := range []string{"authserver", "resourceserver"} {
			if buildErr != nil {
				return
			}
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, name), "./"+name)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Cleanup(func() { os.RemoveAll(buildDir) })
	return buildDir
}
