package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the SQL checks
	"golang.org/x/crypto/argon2"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// Options shape a cluster. Zero values take the defaults.
type Options struct {
	AuthServers     int // default 2
	ResourceServers int // default 3
	// ExtraEnv is added to every server's environment.
	ExtraEnv []string
	// Issuer and Resource are the public URLs (a Front's, for instance);
	// by default the first authorization and resource server's addresses.
	Issuer, Resource string
}

// Cluster is the running system.
type Cluster struct {
	t        testing.TB
	PG       *Postgres
	Store    *sqlstore.Store // the test's own connection, for setup
	SQL      *sql.DB         // plain SQL, for the checks
	Issuer   string          // shared by every authorization server
	Resource string          // shared by every resource server
	AS       []*Proc         // authorization servers
	RS       []*Proc         // resource servers
	Secret   string
	bins     string
	env      []string
}

// Proc is one server process.
type Proc struct {
	Name string
	Base string // http://127.0.0.1:port
	Addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *bytes.Buffer
	mu   *sync.Mutex
	bin  string
	env  []string
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// buildBinaries builds both servers once per test binary.
func buildBinaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "linkslot-cluster-bin.")
		if buildErr != nil {
			return
		}
		root := repoRoot()
		for _, name := range []string{"authserver", "resourceserver"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, name), "./"+name)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Start builds the binaries, starts a dedicated PostgreSQL, migrates it
// with `authserver migrate`, loads the demo data and starts the servers.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.AuthServers == 0 {
		o.AuthServers = 2
	}
	if o.ResourceServers == 0 {
		o.ResourceServers = 3
	}
	pg := StartPostgres(t)
	bins := buildBinaries(t)
	c := &Cluster{t: t, PG: pg, bins: bins, Secret: "cluster-" + randHex(24)}
	asPorts := make([]int, o.AuthServers)
	rsPorts := make([]int, o.ResourceServers)
	for i := range asPorts {
		asPorts[i] = freePort(t)
	}
	for i := range rsPorts {
		rsPorts[i] = freePort(t)
	}
	c.Issuer = fmt.Sprintf("http://127.0.0.1:%d", asPorts[0])
	c.Resource = fmt.Sprintf("http://127.0.0.1:%d/mcp", rsPorts[0])
	if o.Issuer != "" {
		c.Issuer = o.Issuer
	}
	if o.Resource != "" {
		c.Resource = o.Resource
	}
	c.env = append([]string{
		"LINKSLOT_DATABASE_URL=" + pg.URL,
		"LINKSLOT_ISSUER=" + c.Issuer,
		"LINKSLOT_RESOURCE=" + c.Resource,
		"LINKSLOT_SECRET_KEY=" + c.Secret,
		"LINKSLOT_LOG_FORMAT=json",
		"LINKSLOT_VAR_DIR=" + t.TempDir(),
		"LINKSLOT_SHUTDOWN_TIMEOUT=2s",
		"LINKSLOT_DB_MAX_CONNS=16",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}, o.ExtraEnv...)

	migrate(t, bins, c.env)
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, pg.URL, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c.Store = s
	if c.SQL, err = sql.Open("pgx", pg.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.SQL.Close() })
	if _, err := demo.Load(ctx, s, demo.Data{Password: DemoPassword, Hash: CheapHash,
		Catalogs: booking.DemoCatalogs(store.SystemClock())}); err != nil {
		t.Fatalf("demo data: %v", err)
	}

	var wg sync.WaitGroup
	for i, port := range asPorts {
		c.AS = append(c.AS, c.newProc(fmt.Sprintf("as%d", i+1), "authserver", port, "LINKSLOT_AUTH_LISTEN"))
	}
	for i, port := range rsPorts {
		c.RS = append(c.RS, c.newProc(fmt.Sprintf("rs%d", i+1), "resourceserver", port, "LINKSLOT_RS_LISTEN"))
	}
	// The first authorization server creates the signing key; start it
	// alone so the replicas do not race for the first key.
	c.AS[0].start(t)
	c.AS[0].waitReady(t)
	for _, p := range append(c.AS[1:], c.RS...) {
		p.start(t)
	}
	for _, p := range append(c.AS[1:], c.RS...) {
		wg.Add(1)
		go func() { defer wg.Done(); p.waitReady(t) }()
	}
	wg.Wait()
	return c
}

func (c *Cluster) newProc(name, bin string, port int, listenVar string) *Proc {
	return newProcess(name, c.bins, bin, port, c.env, fmt.Sprintf("%s=127.0.0.1:%d", listenVar, port))
}

// migrate runs `authserver migrate` from bins with env.
func migrate(t testing.TB, bins string, env []string) {
	t.Helper()
	mig := exec.Command(filepath.Join(bins, "authserver"), "migrate")
	mig.Env = env
	if out, err := mig.CombinedOutput(); err != nil {
		t.Fatalf("authserver migrate: %v\n%s", err, out)
	}
}

// newProcess returns the (not yet started) process name running bin from
// bins on 127.0.0.1:port, with env and then extra.
func newProcess(name, bins, bin string, port int, env []string, extra ...string) *Proc {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	return &Proc{Name: name, Base: "http://" + addr, Addr: addr, bin: filepath.Join(bins, bin),
		env: append(append([]string{}, env...), extra...), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
}

// StartExtraRS starts one more resource server with a different database
// URL (the slow-database proxy, for instance).
func (c *Cluster) StartExtraRS(t testing.TB, name, databaseURL string) *Proc {
	t.Helper()
	p := c.newProc(name, "resourceserver", freePort(t), "LINKSLOT_RS_LISTEN")
	p.env = append(p.env, "LINKSLOT_DATABASE_URL="+databaseURL)
	p.start(t)
	p.waitReady(t)
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() > 4<<20 {
		return len(p), nil // bounded
	}
	return w.b.Write(p)
}

func (p *Proc) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.bin, "serve")
	cmd.Env = p.env
	cmd.Stdout = lockedWriter{p.mu, p.log}
	cmd.Stderr = lockedWriter{p.mu, p.log}
	// Own process group, killed with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.Name, err)
	}
	p.cmd = cmd
	done := make(chan struct{})
	p.done = done
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		if t.Failed() {
			t.Logf("--- %s log (tail) ---\n%s", p.Name, p.LogTail(1500))
		}
	})
}

// Kill sends SIGKILL to the process group.
func (p *Proc) Kill() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// Restart starts the process again (after Kill).
func (p *Proc) Restart(t testing.TB) {
	t.Helper()
	p.start(t)
	p.waitReady(t)
}

// LogTail returns the last n bytes of the process's output.
func (p *Proc) LogTail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.log.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Grep returns up to n lines of every server's output containing s.
func (c *Cluster) Grep(s string, n int) []string {
	var out []string
	for _, p := range append(append([]*Proc{}, c.AS...), c.RS...) {
		for _, l := range strings.Split(p.Log(), "\n") {
			if strings.Contains(l, s) && len(out) < n {
				out = append(out, p.Name+": "+l)
			}
		}
	}
	return out
}

// Log returns the whole captured output.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *Proc) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", p.Name, p.LogTail(4000))
		default:
		}
		resp, err := http.Get(p.Base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s not ready after 60s: %s", p.Name, p.LogTail(4000))
}

// DemoPassword is the password of the demo accounts and of every agent's
// account.
const DemoPassword = "cluster-demo-password"

// CheapHash hashes like password.Hash but with the smallest argon2id cost,
// which password.Verify reads back from the hash: sign-in stays the
// production code path while hundreds of them stay cheap.
func CheapHash(pw string) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(pw), salt, 1, 8, 1, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=8,t=1,p=1$%s$%s", argon2.Version, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// CreateAccounts creates n accounts agent-<prefix>-<i>@example.com.
func (c *Cluster) CreateAccounts(t testing.TB, prefix string, n int) []store.Account {
	t.Helper()
	ctx := context.Background()
	hash, _ := CheapHash(DemoPassword)
	now := store.SystemClock()
	out := make([]store.Account, n)
	for i := range out {
		a := store.Account{ID: store.NewID("acc"), Email: fmt.Sprintf("agent-%s-%d@example.com", prefix, i),
			PasswordHash: hash, CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}
		if err := c.Store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		out[i] = a
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return strings.ToLower(fmt.Sprintf("%x", b))
}
