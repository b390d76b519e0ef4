package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/linkslot/linkslot/"

// goList runs `go list` with args in the module root and returns its
// output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// Domain packages know no database driver, OAuth library, web framework,
// MCP or HTTP.
func TestDomainImportsNoAdapters(t *testing.T) {
	domain := []string{"internal/booking", "internal/identity", "internal/mutation", "internal/grant",
		"internal/confirm", "internal/idempotency", "internal/scope", "internal/store", "internal/problem"}
	forbidden := []string{"gorm.io/", "github.com/ory/fosite", "github.com/labstack/echo",
		"github.com/modelcontextprotocol/go-sdk", "net/http"}
	for _, p := range domain {
		for _, dep := range goList(t, "-deps", "./"+p) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/") {
					t.Errorf("%s imports %s", p, dep)
				}
			}
		}
	}
}

// The resource server shares only the database and internal/ with the
// authorization server.
func TestResourceServerImportsNoAuthServer(t *testing.T) {
	for _, dep := range goList(t, "-deps", "./resourceserver/...") {
		if strings.HasPrefix(dep, module+"authserver") {
			t.Errorf("the resource server imports %s", dep)
		}
	}
}

// The MCP tools call the mutation service and none of its pieces.
func TestToolsUseTheMutationService(t *testing.T) {
	imports := goList(t, "-f", `{{join .Imports " "}}`, "./resourceserver/internal/tools")
	seen := map[string]bool{}
	for _, p := range imports {
		seen[p] = true
	}
	if !seen[module+"internal/mutation"] {
		t.Errorf("the tools do not import internal/mutation: %v", imports)
	}
	for _, p := range []string{"internal/grant", "internal/confirm", "internal/idempotency"} {
		if seen[module+p] {
			t.Errorf("the tools import %s directly", p)
		}
	}
}
