// Command healthprobe is the container health check for images without a
// shell: it GETs one URL and exits 0 on a 2xx answer, 1 otherwise.
//
//	healthprobe http://127.0.0.1:8080/readyz
//
// The runtime image is distroless (no shell, curl or wget), so Docker and
// Compose health checks run this static binary instead. Kubernetes does not
// need it: its kubelet probes HTTP itself.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: healthprobe URL")
		os.Exit(2)
	}
	if err := probe(context.Background(), os.Args[1], 3*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "healthprobe:", err)
		os.Exit(1)
	}
}

func probe(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("%s answered %s", url, res.Status)
	}
	return nil
}
