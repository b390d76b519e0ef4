package rshttp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsDir holds the TypeScript MCP SDK client script.
var tsDir = filepath.Join("..", "e2e", "ts")

// needNode skips without node and npm, except under CI=true, where it fails.
func needNode(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on the PATH: CI requires the TypeScript MCP SDK check", bin)
			}
			t.Skipf("%s is not on the PATH; the TypeScript MCP SDK check needs Node.js and npm", bin)
		}
	}
}

// npmInstall installs the pinned packages once (node_modules is kept) with
// `npm ci`, which installs exactly what package-lock.json says and never
// writes it: a test run leaves the working tree as it was, and a lock that
// no longer matches package.json fails here instead of being rewritten.
func npmInstall(t *testing.T) {
	t.Helper()
	_, errSDK := os.Stat(filepath.Join(tsDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	_, errInspector := os.Stat(filepath.Join(tsDir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	if errSDK == nil && errInspector == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = tsDir
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
		t.Skipf("npm ci failed (no access to the npm registry?): %v\n%s", err, out)
	}
}

// TestTypeScriptSDKClient runs the official TypeScript MCP SDK client against
// the real authorization server (real sign-in and consent pages) and the
// resource server: OAuth linking with demo-mcp-client and PKCE, then
// search_bookable_business.
func TestTypeScriptSDKClient(t *testing.T) {
	needNode(t)
	if testing.Short() {
		t.Skip("short mode: skips the Node.js client")
	}
	npmInstall(t)
	sys := newSystemWith(t, true)
	res := runTSClient(t, sys)
	t.Logf("TypeScript SDK client: protocol %s, scope %q, results %v", res.ProtocolVersion, res.Scope, res.Results)
	if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, "demo-mcp-client"); err != nil {
		t.Fatalf("no link was created by the TypeScript client's consent: %v", err)
	}
}

// tsResult is what linkslot-e2e.mjs prints.
type tsResult struct {
	OK              bool     `json:"ok"`
	ClientID        string   `json:"clientId"`
	ProtocolVersion string   `json:"protocolVersion"`
	Scope           string   `json:"scope"`
	Tools           []string `json:"tools"`
	Results         []string `json:"results"`
}

// runTSClient runs linkslot-e2e.mjs against sys as the demo person, with
// env added to the environment, and checks that it listed the tools and
// found a business.
func runTSClient(t *testing.T, sys *system, env ...string) tsResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "linkslot-e2e.mjs")
	cmd.Dir = tsDir
	cmd.Env = append(append(os.Environ(), "LINKSLOT_MCP_URL="+sys.resource, "LINKSLOT_EMAIL=demo@example.com",
		"LINKSLOT_PASSWORD="+demoPassword, "LINKSLOT_QUERY=haircut"), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node linkslot-e2e.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var res tsResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &res); err != nil {
		t.Fatalf("script output: %v\n%s", err, out)
	}
	if !res.OK || len(res.Tools) < len(readTools) || len(res.Results) == 0 {
		t.Fatalf("script result: %+v", res)
	}
	return res
}

// TestInspectorCLI runs the MCP Inspector CLI (its own interactive OAuth
// with demo-mcp-client) against the real authorization server and the
// resource server, then search_bookable_business. It needs the Inspector in
// e2e/ts/node_modules (npm ci installs it) or LINKSLOT_INSPECTOR.
func TestInspectorCLI(t *testing.T) {
	needNode(t)
	if testing.Short() {
		t.Skip("short mode: skips the Node.js client")
	}
	npmInstall(t)
	bin := os.Getenv("LINKSLOT_INSPECTOR")
	if bin == "" {
		bin = filepath.Join("node_modules", ".bin", "mcp-inspector")
		if _, err := os.Stat(filepath.Join(tsDir, bin)); err != nil {
			t.Skip("the MCP Inspector is not installed in e2e/ts/node_modules")
		}
	}
	sys := newSystemWith(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "inspector-e2e.mjs")
	cmd.Dir = tsDir
	cmd.Env = append(os.Environ(), "LINKSLOT_MCP_URL="+sys.resource, "LINKSLOT_EMAIL=demo@example.com",
		"LINKSLOT_PASSWORD="+demoPassword, "LINKSLOT_INSPECTOR="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node inspector-e2e.mjs: %v\n%s", err, out)
	}
	t.Logf("MCP Inspector CLI: %s", strings.TrimSpace(string(out)))
}
