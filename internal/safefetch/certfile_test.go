package safefetch_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/safefetch"
)

// childURL, in a child process of TestFetchTrustsSSLCertFile, is the
// document it fetches.
const childURL = "LINKSLOT_SAFEFETCH_CERTFILE_URL"

// With no RootCAs the fetcher verifies certificates against the system
// trust store, which Go reads from SSL_CERT_FILE: a child process given
// only the test CA there fetches the document from a host under that CA.
// (The trust store is loaded once per process, hence the child.)
func TestFetchTrustsSSLCertFile(t *testing.T) {
	if u := os.Getenv(childURL); u != "" {
		f := safefetch.New(safefetch.Options[doc]{Kind: "test", Development: true, Decode: decodeDoc,
			Resolver: resolver{"docs.test": {"127.0.0.1"}}})
		d, err := f.Get(context.Background(), u)
		if err != nil || d.Name != "Example" {
			t.Fatalf("child fetch with SSL_CERT_FILE=%s: %+v, %v", os.Getenv("SSL_CERT_FILE"), d, err)
		}
		return
	}
	h := newHost(t)
	u := h.handle("/client.json", jsonDoc(""))
	run := func(env ...string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFetchTrustsSSLCertFile$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), append([]string{childURL + "=" + u, "SSL_CERT_DIR=" + t.TempDir()}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("SSL_CERT_FILE=" + h.ca.WritePEM(t, t.TempDir())); err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("with the test CA in SSL_CERT_FILE the fetch failed: %v\n%s", err, out)
	}
	// The same child with an empty trust store refuses the certificate.
	empty := t.TempDir() + "/empty.pem"
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run("SSL_CERT_FILE=" + empty); err == nil || !strings.Contains(out, "certificate") {
		t.Fatalf("without the test CA the fetch was not refused on its certificate: %v\n%s", err, out)
	}
	if n := h.count("/client.json"); n != 1 {
		t.Fatalf("the document was served %d times, want 1 (the trusted child)", n)
	}
}
