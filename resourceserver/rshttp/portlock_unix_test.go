//go:build unix

package rshttp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lockPort makes the tests of every checkout on this machine that need one
// fixed port take turns for it: it holds an exclusive lock on a file named
// after the port until the test ends.
func lockPort(t *testing.T, port int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("linkslot-test-port-%d.lock", port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock for port %d: %v", port, err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
