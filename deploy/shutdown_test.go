package deploy_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/metrics"
)

// TestSIGTERMDrainsAcceptedRequests is what a rolling update does to a pod:
// SIGTERM arrives while a burst of requests is in flight. The server must
// stop accepting new connections, finish every request it accepted, count
// each one, and return cleanly — no accepted request lost.
func TestSIGTERMDrainsAcceptedRequests(t *testing.T) {
	const burst = 32
	m := metrics.New("resourceserver")
	arrived := make(chan struct{}, burst)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release // still working when SIGTERM lands
		io.WriteString(w, "done")
	})
	l, err := app.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	served := make(chan error, 1)
	go func() {
		served <- app.Serve(context.Background(), l, m.HTTPMiddleware(metrics.Pattern, mux), 30*time.Second, log)
	}()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	results := make(chan string, burst)
	for range burst {
		wg.Go(func() {
			res, err := client.Post("http://"+addr+"/mcp", "application/json", nil)
			if err != nil {
				results <- "error: " + err.Error()
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			results <- res.Status + " " + string(b)
		})
	}
	for range burst {
		<-arrived // every request accepted and inside its handler
	}

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes once shutdown has begun; wait for that (no timing
	// assertion: the test's own deadline bounds it).
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(results)
	for r := range results {
		if r != "200 OK done" {
			t.Errorf("accepted request ended %q", r)
		}
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`linkslot_http_requests_total{code="200",route="POST /mcp",service="resourceserver"} 32`,
		`linkslot_http_requests_in_flight{service="resourceserver"} 0`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
