package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries holds the layering of STYLE.md: the resource server
// shares only the database and internal/ with the authorization server.
func TestImportBoundaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/linkslot/linkslot/resourceserver").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/linkslot/linkslot/authserver", "github.com/linkslot/linkslot/consent-ui", "github.com/ory/fosite"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("resourceserver depends on %s", p)
			}
		}
	}
}
