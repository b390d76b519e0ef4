package cluster

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetricsBothServers starts both servers the way `make run` does: one
// environment for both processes, on one host, with metrics turned on.
// Each server reads its own metrics address, so both listen and both
// serve /metrics (with a single shared variable the second could not bind).
func TestMetricsBothServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both servers and starts them as processes")
	}
	bins := buildBinaries(t)
	dir := t.TempDir()
	asPort, rsPort, asMetrics, rsMetrics := freePort(t), freePort(t), freePort(t), freePort(t)
	env := []string{
		"LINKSLOT_DATABASE_URL=sqlite://" + filepath.Join(dir, "linkslot.db"),
		fmt.Sprintf("LINKSLOT_AUTH_LISTEN=127.0.0.1:%d", asPort),
		fmt.Sprintf("LINKSLOT_ISSUER=http://127.0.0.1:%d", asPort),
		fmt.Sprintf("LINKSLOT_RS_LISTEN=127.0.0.1:%d", rsPort),
		fmt.Sprintf("LINKSLOT_RESOURCE=http://127.0.0.1:%d/mcp", rsPort),
		fmt.Sprintf("LINKSLOT_AUTH_METRICS_LISTEN=127.0.0.1:%d", asMetrics),
		fmt.Sprintf("LINKSLOT_RS_METRICS_LISTEN=127.0.0.1:%d", rsMetrics),
		"LINKSLOT_VAR_DIR=" + filepath.Join(dir, "var"),
		"LINKSLOT_SHUTDOWN_TIMEOUT=2s",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}
	migrate(t, bins, env)
	procs := map[string]*Proc{}
	for _, p := range []struct {
		name    string
		port    int
		metrics int
	}{{"authserver", asPort, asMetrics}, {"resourceserver", rsPort, rsMetrics}} {
		pr := newProcess(p.name, bins, p.name, p.port, env)
		timeToReady(t, pr)
		procs[p.name] = pr
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for name, port := range map[string]int{"authserver": asMetrics, "resourceserver": rsMetrics} {
		resp, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			t.Fatalf("%s /metrics: %v\n%s", name, err, procs[name].LogTail(2000))
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `service="`+name+`"`) ||
			!strings.Contains(string(body), "linkslot_db_up") {
			t.Fatalf("%s /metrics: %d\n%.600s", name, resp.StatusCode, body)
		}
	}
}
