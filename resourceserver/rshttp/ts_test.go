package rshttp_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
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
	installed := true
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector", "mcp-remote"} {
		if _, err := os.Stat(filepath.Join(tsDir, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			installed = false
		}
	}
	if installed {
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

// needNodeClients skips without node and npm (or in short mode) and
// installs the clients in e2e/ts.
func needNodeClients(t *testing.T) {
	t.Helper()
	needNode(t)
	if testing.Short() {
		t.Skip("short mode: skips the Node.js clients")
	}
	npmInstall(t)
}

// nodeResult is the JSON line each script in e2e/ts prints; each fills the
// fields that concern it.
type nodeResult struct {
	OK              bool     `json:"ok"`
	ClientID        string   `json:"clientId"`
	ProtocolVersion string   `json:"protocolVersion"` // linkslot-e2e.mjs
	Scope           string   `json:"scope"`
	Registered      bool     `json:"registered"`     // linkslot-e2e.mjs: registered dynamically
	Registration    string   `json:"registration"`   // mcp-remote-e2e.mjs: static or dynamic
	RedirectURI     string   `json:"redirectUri"`    // mcp-remote-e2e.mjs
	Callback        string   `json:"callback"`       // inspector-e2e.mjs
	Authorizations  int      `json:"authorizations"` // inspector-e2e.mjs
	Tools           []string `json:"tools"`
	Results         []string `json:"results"`
	Validated       []string `json:"validated"` // linkslot-e2e.mjs: answers the SDK validated, "tool:status or code"
}

// runNode runs script in e2e/ts with env added to the environment and
// returns the result it printed; a non-zero exit, or a result that is not
// ok, fails the test with the script's output.
func runNode(t *testing.T, script string, timeout time.Duration, env ...string) nodeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = tsDir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, out, stderr.String())
	}
	var res nodeResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &res); err != nil || !res.OK {
		t.Fatalf("node %s printed %s (%v)", script, out, err)
	}
	return res
}

// personEnv is the environment of a script that links as the demo person.
func (sys *system) personEnv() []string {
	return []string{"LINKSLOT_MCP_URL=" + sys.resource, "LINKSLOT_EMAIL=demo@example.com", "LINKSLOT_PASSWORD=" + demoPassword}
}

// TestTypeScriptSDKClient runs the official TypeScript MCP SDK client against
// the real authorization server (real sign-in and consent pages) and the
// resource server: OAuth linking with demo-mcp-client and PKCE, then
// search_bookable_business.
func TestTypeScriptSDKClient(t *testing.T) {
	needNodeClients(t)
	sys := newSystemWith(t, true)
	res := runTSClient(t, sys)
	t.Logf("TypeScript SDK client: protocol %s, scope %q, results %v, answers validated against the listed output schemas: %v", res.ProtocolVersion, res.Scope, res.Results, res.Validated)
	// The SDK's callTool validated each of these answers against the
	// tool's listed output schema ($defs and $ref, enums, formats): a
	// catalog, open times, refusals, and when the token may write a
	// booking made, fetched, moved (or refused) and cancelled.
	want := []string{"check_business_availability:ok", "check_business_availability:invalid_time", "search_my_bookings:ok",
		"get_my_booking:booking_not_found", "check_my_booking_availability:booking_not_found"}
	if strings.Contains(" "+res.Scope+" ", " bookings:write ") {
		want = append(want, "create_my_booking:confirmation_required", "create_my_booking:summary_changed",
			"create_my_booking:confirmed", "get_my_booking:ok", "cancel_my_booking:confirmation_required", "cancel_my_booking:cancelled",
			"request_business_callback:confirmation_required", "request_business_callback:requested",
			"request_business_callback:replay", "request_business_callback:idempotency_conflict",
			"join_my_waitlist:confirmation_required", "join_my_waitlist:waitlisted", "join_my_waitlist:replay",
			"join_my_waitlist:idempotency_conflict")
	}
	for _, w := range want {
		if !slices.Contains(res.Validated, w) {
			t.Errorf("the TypeScript SDK client validated no %s answer: %v", w, res.Validated)
		}
	}
	if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, "demo-mcp-client"); err != nil {
		t.Fatalf("no link was created by the TypeScript client's consent: %v", err)
	}
}

// runTSClient runs linkslot-e2e.mjs against sys as the demo person, with
// env added to the environment, and checks that it listed the tools and
// found a business.
func runTSClient(t *testing.T, sys *system, env ...string) nodeResult {
	t.Helper()
	res := runNode(t, "linkslot-e2e.mjs", 90*time.Second, append(append(sys.personEnv(), "LINKSLOT_QUERY=haircut"), env...)...)
	hasReadTools(t, "the TypeScript SDK client's tools/list", res.Tools)
	if len(res.Results) == 0 {
		t.Fatalf("the TypeScript SDK client's search_bookable_business found nothing: %+v", res)
	}
	return res
}

// TestInspectorCLI runs the MCP Inspector CLI (its own interactive OAuth
// with demo-mcp-client) against the real authorization server and the
// resource server, then search_bookable_business. It needs the Inspector in
// e2e/ts/node_modules (npm ci installs it) or LINKSLOT_INSPECTOR.
func TestInspectorCLI(t *testing.T) {
	needNodeClients(t)
	sys := newSystemWith(t, true)
	res := runInspector(t, sys)
	if len(res.Results) == 0 {
		t.Fatalf("the Inspector's search_bookable_business found nothing: %+v", res)
	}
	t.Logf("MCP Inspector CLI: %+v", res)
}

// runInspector runs inspector-e2e.mjs against sys as the demo person with
// env added, and checks that the CLI was authorized and answered.
func runInspector(t *testing.T, sys *system, env ...string) nodeResult {
	t.Helper()
	bin := os.Getenv("LINKSLOT_INSPECTOR")
	if bin == "" {
		bin = filepath.Join("node_modules", ".bin", "mcp-inspector")
	}
	res := runNode(t, "inspector-e2e.mjs", 150*time.Second, append(append(sys.personEnv(), "LINKSLOT_INSPECTOR="+bin), env...)...)
	if res.Authorizations == 0 {
		t.Fatalf("the Inspector was never authorized: %+v", res)
	}
	if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, demo.ClientID); err != nil {
		t.Fatalf("no link was created by the Inspector's consent: %v", err)
	}
	return res
}

// TestInspectorCLIDefaultCallback runs the MCP Inspector CLI given only
// --client-id demo-mcp-client: it calls back to its default
// http://127.0.0.1:6276/oauth/callback, which the demo client accepts through
// its http://127.0.0.1/oauth/callback redirect (docs/reference.md §8), and
// lists the tools. Runs of this test on one machine take turns for the port.
func TestInspectorCLIDefaultCallback(t *testing.T) {
	needNodeClients(t)
	const callback = "http://127.0.0.1:6276/oauth/callback"
	lockPort(t, 6276)
	if l, err := net.Listen("tcp", "127.0.0.1:6276"); err != nil {
		t.Fatalf("127.0.0.1:6276 is taken (%v): the Inspector's default callback needs it; stop what listens there (an Inspector?) and run again", err)
	} else {
		l.Close()
	}
	sys := newSystemWith(t, true)
	res := runInspector(t, sys, "LINKSLOT_INSPECTOR_CALLBACK=default")
	if res.Callback != callback {
		t.Fatalf("the Inspector called back to %q, want %q", res.Callback, callback)
	}
	hasReadTools(t, "the Inspector's tools/list", res.Tools)
	t.Logf("MCP Inspector CLI, default callback: %+v", res)
}

// hasReadTools checks that the tool names a client listed include the read
// tools.
func hasReadTools(t *testing.T, what string, tools []string) {
	t.Helper()
	for _, name := range readTools {
		if !slices.Contains(tools, name) {
			t.Fatalf("%s lacks %s: %v", what, name, tools)
		}
	}
}

// dcrSystem is the system with dynamic client registration open
// (LINKSLOT_DCR_POLICY=open, docs/reference.md §14), the real pages, and
// an authorization server that advertises its registration_endpoint.
func dcrSystem(t *testing.T) *system {
	t.Helper()
	sys := buildSystem(t, systemOpts{realUI: true, store: sqltest.SQLite(t), dcrPolicy: "open"})
	resp, err := sys.http.Get(sys.issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		RegistrationEndpoint string `json:"registration_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	if md.RegistrationEndpoint == "" {
		t.Fatal("LINKSLOT_DCR_POLICY=open, yet the authorization server metadata has no registration_endpoint")
	}
	return sys
}

// registeredLink checks that clientID is a client that registered itself
// (not the demo client, and kept with its registration) and that the demo
// person linked it.
func (sys *system) registeredLink(t *testing.T, clientID string) {
	t.Helper()
	if clientID == "" || clientID == demo.ClientID {
		t.Fatalf("linked as %q, not as a client that registered itself", clientID)
	}
	if _, err := sys.store.GetClient(sys.ctx, clientID); err != nil {
		t.Fatalf("the registered client %s is not stored: %v", clientID, err)
	}
	if _, err := sys.store.GetClientRegistration(sys.ctx, clientID); err != nil {
		t.Fatalf("client %s has no dynamic registration: %v", clientID, err)
	}
	if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, clientID); err != nil {
		t.Fatalf("no link for the registered client %s: %v", clientID, err)
	}
}

// TestTypeScriptSDKDynamicRegistration runs the TypeScript MCP SDK client
// with no client information: its auth() registers at the
// registration_endpoint (RFC 7591), then links through the real sign-in and
// consent pages with the client_id it was given, and calls a tool.
func TestTypeScriptSDKDynamicRegistration(t *testing.T) {
	needNodeClients(t)
	sys := dcrSystem(t)
	res := runTSClient(t, sys, "LINKSLOT_REGISTER=dynamic")
	if !res.Registered {
		t.Fatalf("the script did not register: %+v", res)
	}
	sys.registeredLink(t, res.ClientID)
	t.Logf("TypeScript SDK, dynamic registration: client %s, scope %q, results %v", res.ClientID, res.Scope, res.Results)
}

// runMCPRemote runs mcp-remote-e2e.mjs against sys with env added.
func runMCPRemote(t *testing.T, sys *system, env ...string) nodeResult {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("mcp-remote opens the browser through xdg-open only on Linux; on %s it would start the system browser", runtime.GOOS)
	}
	res := runNode(t, "mcp-remote-e2e.mjs", 150*time.Second, append(sys.personEnv(), env...)...)
	if len(res.Results) == 0 {
		t.Fatalf("search_bookable_business through mcp-remote found nothing: %+v", res)
	}
	hasReadTools(t, "tools/list through mcp-remote", res.Tools)
	u, err := url.Parse(res.RedirectURI)
	if err != nil || u.Scheme != "http" || u.Hostname() != "localhost" || u.Path != "/oauth/callback" {
		t.Fatalf("mcp-remote's redirect_uri %q, want its default http://localhost:PORT/oauth/callback", res.RedirectURI)
	}
	return res
}

// TestMCPRemote runs mcp-remote, the stdio proxy desktop hosts start, with
// its defaults (its own loopback callback, a browser it opens) and talks to
// it over stdio with the TypeScript SDK client. "registered client" gives it
// the demo client (--static-oauth-client-info), whose
// http://localhost/oauth/callback redirect matches its callback; "dynamic
// registration" gives it nothing, as most people run it, so that it
// registers itself (LINKSLOT_DCR_POLICY=open).
func TestMCPRemote(t *testing.T) {
	needNodeClients(t)
	t.Run("registered client", func(t *testing.T) {
		sys := newSystemWith(t, true)
		res := runMCPRemote(t, sys, "LINKSLOT_MCP_REMOTE_CLIENT="+demo.ClientID)
		if res.ClientID != demo.ClientID || res.Registration != "static" {
			t.Fatalf("mcp-remote linked as %q (%s), want %s", res.ClientID, res.Registration, demo.ClientID)
		}
		if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, demo.ClientID); err != nil {
			t.Fatalf("no link was created by mcp-remote's consent: %v", err)
		}
		t.Logf("mcp-remote, registered client: %+v", res)
	})
	t.Run("dynamic registration", func(t *testing.T) {
		sys := dcrSystem(t)
		res := runMCPRemote(t, sys)
		sys.registeredLink(t, res.ClientID)
		t.Logf("mcp-remote, dynamic registration: %+v", res)
	})
}
