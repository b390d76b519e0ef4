package architecture

import (
	"bytes"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go file of the module is as gofmt writes it (go/format is gofmt's
// printer), so `gofmt -l .` prints nothing.
func TestGofmt(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "var") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if !bytes.Equal(src, out) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s is not gofmt-formatted: run gofmt -w %s", rel, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
