// Command signinburst measures a burst of concurrent password sign-ins
// against a real authorization server process: it migrates a throwaway
// SQLite database, loads the demo data, starts `authserver serve`, has -n
// browsers fetch the sign-in form, then sends all their POST /login at once
// with the demo account's password. It reports the status codes (and
// whether every 503 carried Retry-After), the latency distribution, and the
// server's peak resident memory (VmHWM from /proc, sampled VmRSS too).
//
//	go build -o bin/authserver ./authserver
//	go run ./bench/signinburst -bin bin/authserver -n 200
//
// -rss-cap stops the server if its resident memory passes the cap (a
// guard for measuring an unbounded build on a shared machine); the report
// then says so. make bench runs it (scripts/bench) and appends the result
// to var/bench/report.txt.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var (
		bin      = flag.String("bin", "bin/authserver", "the authorization server binary")
		n        = flag.Int("n", 200, "concurrent sign-ins")
		rssCap   = flag.Int64("rss-cap", 4<<30, "stop the server when its resident memory passes this many bytes")
		out      = flag.String("out", "", "also write the summary to this file")
		password = flag.String("password", "linkslot-demo", "the demo account's password")
	)
	flag.Parse()
	sum, err := burst(*bin, *n, *rssCap, *password)
	if err != nil {
		fmt.Fprintln(os.Stderr, "signinburst:", err)
		os.Exit(1)
	}
	fmt.Print(sum)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(sum), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "signinburst:", err)
			os.Exit(1)
		}
	}
}

func burst(bin string, n int, rssCap int64, pw string) (string, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "signinburst.")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	port, err := freePort()
	if err != nil {
		return "", err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	env := append(os.Environ(),
		"LINKSLOT_DATABASE_URL=sqlite://"+filepath.Join(tmp, "linkslot.db"),
		"LINKSLOT_VAR_DIR="+filepath.Join(tmp, "var"),
		"LINKSLOT_AUTH_LISTEN=127.0.0.1:"+strconv.Itoa(port),
		"LINKSLOT_ISSUER="+base,
		"LINKSLOT_DEMO_PASSWORD="+pw,
		"LINKSLOT_REQUEST_TIMEOUT=60s",
	)
	for _, args := range [][]string{{"migrate"}, {"demo"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, tmp
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s %s: %v\n%s", bin, args[0], err, b)
		}
	}
	logf, err := os.Create(filepath.Join(tmp, "serve.log"))
	if err != nil {
		return "", err
	}
	defer logf.Close()
	srv := exec.Command(bin, "serve")
	srv.Env, srv.Dir, srv.Stdout, srv.Stderr = env, tmp, logf, logf
	if err := srv.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { srv.Wait(); close(exited) }()
	defer func() {
		srv.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			srv.Process.Kill()
			<-exited
		}
	}()
	if err := waitReady(base+"/readyz", exited); err != nil {
		b, _ := os.ReadFile(logf.Name())
		return "", fmt.Errorf("%v\n%s", err, b)
	}
	idle := rss(srv.Process.Pid, "VmRSS")

	// Every browser fetches the form first: its CSRF cookie and token.
	type browser struct {
		hc   *http.Client
		csrf string
	}
	bs := make([]browser, n)
	for i := range bs {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, Timeout: 120 * time.Second,
			Transport:     &http.Transport{MaxIdleConnsPerHost: 2},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		tok, err := formToken(hc, base+"/login")
		if err != nil {
			return "", fmt.Errorf("GET /login: %w", err)
		}
		bs[i] = browser{hc, tok}
	}

	// Sample resident memory while the burst runs; stop the server past
	// the cap.
	var peakSample atomic.Int64
	var capped atomic.Bool
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r := rss(srv.Process.Pid, "VmRSS")
				if r > peakSample.Load() {
					peakSample.Store(r)
				}
				if rssCap > 0 && r > rssCap && !capped.Swap(true) {
					srv.Process.Kill()
				}
			}
		}
	}()

	type outcome struct {
		status     int
		retryAfter string
		tryAgain   bool
		lat        time.Duration
		err        error
	}
	res := make([]outcome, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			form := url.Values{"email": {"demo@example.com"}, "password": {pw}, "csrf_token": {bs[i].csrf}}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			<-gate
			t0 := time.Now()
			resp, err := bs[i].hc.Do(req)
			o := outcome{lat: time.Since(t0), err: err}
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				o.lat = time.Since(t0)
				o.status, o.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
				o.tryAgain = strings.Contains(string(b), "Try again in a moment")
			}
			res[i] = o
		}()
	}
	began := time.Now()
	close(gate)
	wg.Wait()
	took := time.Since(began)
	close(stop)
	<-sampled
	hwm := rss(srv.Process.Pid, "VmHWM")

	counts := map[string]int{}
	var lats []time.Duration
	var firstErr error
	bad503 := 0
	for _, o := range res {
		lats = append(lats, o.lat)
		if o.err != nil {
			counts["error"]++
			if firstErr == nil {
				firstErr = o.err
			}
			continue
		}
		counts[strconv.Itoa(o.status)]++
		if o.status == http.StatusServiceUnavailable && (o.retryAfter == "" || !o.tryAgain) {
			bad503++
		}
	}
	slices.Sort(lats)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "sign-in burst: %d concurrent POST /login (demo account, right password), %s in all\n", n, took.Round(time.Millisecond))
	fmt.Fprintf(&b, "  status codes:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s×%d", k, counts[k])
	}
	fmt.Fprintln(&b)
	if counts["503"] > 0 {
		fmt.Fprintf(&b, "  503 without Retry-After or without the try-again page: %d\n", bad503)
	}
	fmt.Fprintf(&b, "  latency: p50 %s, p90 %s, max %s\n", pct(lats, 0.5), pct(lats, 0.9), lats[len(lats)-1].Round(time.Millisecond))
	peak := max(hwm, peakSample.Load())
	fmt.Fprintf(&b, "  resident memory: idle %s, peak %s (VmHWM %s, highest 10 ms sample %s)\n",
		mib(idle), mib(peak), mib(hwm), mib(peakSample.Load()))
	if capped.Load() {
		fmt.Fprintf(&b, "  STOPPED: resident memory passed the cap of %s; the server was killed mid-burst\n", mib(rssCap))
	}
	if firstErr != nil {
		fmt.Fprintf(&b, "  first transport error: %v\n", firstErr)
	}
	onlyAllowed := counts["error"] == 0 && bad503 == 0
	for k := range counts {
		if k != "303" && k != "401" && k != "503" {
			onlyAllowed = false
		}
	}
	fmt.Fprintf(&b, "  targets: only 303, 401 or 503 with Retry-After: %s; none slower than 5 s: %s; RSS ≤ 512 MiB: %s\n",
		yes(onlyAllowed), yes(lats[len(lats)-1] <= 5*time.Second), yes(peak <= 512<<20 && !capped.Load()))
	return b.String(), nil
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func formToken(hc *http.Client, u string) (string, error) {
	resp, err := hc.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := csrfRE.FindSubmatch(b)
	if resp.StatusCode != 200 || m == nil {
		return "", fmt.Errorf("status %d, no form token", resp.StatusCode)
	}
	return html.UnescapeString(string(m[1])), nil
}

func waitReady(u string, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("the server exited")
		default:
		}
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the server was not ready within 60 s")
}

// rss reads a "Vm…: N kB" line of /proc/PID/status, in bytes.
func rss(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func pct(s []time.Duration, p float64) time.Duration {
	return s[min(len(s)-1, int(float64(len(s))*p))].Round(time.Millisecond)
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }
