package storetest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKnowsNoBackend: the suite imports only package store; backends run it
// from their own tests.
func TestKnowsNoBackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/linkslot/linkslot/internal/store/storetest").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/linkslot/linkslot/") && p != "github.com/linkslot/linkslot/internal/store" &&
			p != "github.com/linkslot/linkslot/internal/store/storetest" {
			t.Errorf("storetest depends on %s", p)
		}
		if strings.HasPrefix(p, "gorm.io/") {
			t.Errorf("storetest depends on %s", p)
		}
	}
}
