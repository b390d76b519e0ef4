package deploy_test

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// caddyOverride is what caddy_test reads of docker-compose.caddy.yml.
type caddyOverride struct {
	Services map[string]struct {
		Image       string         `yaml:"image"`
		Ports       []string       `yaml:"ports"`
		Environment map[string]any `yaml:"environment"`
		Volumes     []string       `yaml:"volumes"`
		Networks    map[string]struct {
			IPv4    string   `yaml:"ipv4_address"`
			Aliases []string `yaml:"aliases"`
		} `yaml:"networks"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
}

// caddySite is one site block of the Caddyfile: its address and the
// directives inside it, one line each, trimmed.
type caddySite struct {
	address string
	lines   []string
}

// parseCaddySites reads the top-level site blocks of a Caddyfile (enough of
// the syntax for deploy/Caddyfile: comments, one address per block, nested
// blocks as lines).
func parseCaddySites(src string) []caddySite {
	var sites []caddySite
	depth := 0
	for _, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ') {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if depth == 0 && strings.HasSuffix(line, "{") {
			sites = append(sites, caddySite{address: strings.TrimSpace(strings.TrimSuffix(line, "{"))})
		} else if depth > 0 && !(depth == 1 && line == "}") {
			sites[len(sites)-1].lines = append(sites[len(sites)-1].lines, line)
		}
		// A {$VAR} placeholder opens and closes on its line.
		depth += strings.Count(line, "{") - strings.Count(line, "}")
	}
	return sites
}

// listenPort is the port of a host:port listen address in the base compose
// file's environment.
func listenPort(env map[string]any, key string) string {
	v, _ := env[key].(string)
	_, port, _ := net.SplitHostPort(v)
	return port
}

// checkCaddy returns every property of the Caddy override and the Caddyfile
// that it breaks, given the base compose file.
func checkCaddy(base composeFile, overrideSrc []byte, caddyfile string) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	var o caddyOverride
	if err := yaml.Unmarshal(overrideSrc, &o); err != nil {
		return []string{"docker-compose.caddy.yml: " + err.Error()}
	}
	caddy, ok := o.Services["caddy"]
	if !ok {
		return []string{"service caddy: missing"}
	}
	if !imagePinned(caddy.Image) || !strings.HasPrefix(caddy.Image, "caddy:2.") {
		bad("service caddy: image %q is not a pinned caddy:2.x", caddy.Image)
	}
	for _, p := range []string{"80:80", "443:443"} {
		if !slices.Contains(caddy.Ports, p) {
			bad("service caddy: does not publish %s", p)
		}
	}
	if !slices.Contains(caddy.Volumes, "./Caddyfile:/etc/caddy/Caddyfile:ro") {
		bad("service caddy: does not mount ./Caddyfile read-only at /etc/caddy/Caddyfile")
	}
	for _, s := range []string{"authserver", "resourceserver"} {
		if caddy.DependsOn[s].Condition != "service_healthy" {
			bad("service caddy: does not wait for a healthy %s", s)
		}
	}
	addr, err := netip.ParseAddr(expandDefaults(caddy.Networks["default"].IPv4))
	if err != nil {
		bad("service caddy: no fixed ipv4_address on the default network (%v)", err)
	}
	var subnet netip.Prefix
	if cfg := o.Networks["default"].IPAM.Config; len(cfg) == 1 {
		subnet, _ = netip.ParsePrefix(expandDefaults(cfg[0].Subnet))
	}
	if !subnet.IsValid() || !subnet.Contains(addr) {
		bad("networks.default: subnet %v does not hold Caddy's address %v", subnet, addr)
	}

	// The servers: public https URLs, production, and Caddy trusted.
	var issuerVar, resourceVar string
	for _, name := range []string{"migrate", "authserver", "resourceserver"} {
		env := o.Services[name].Environment
		str := func(k string) string { v, _ := env[k].(string); return v }
		if str("LINKSLOT_ENV") != "production" {
			bad("service %s: LINKSLOT_ENV %q, want production", name, str("LINKSLOT_ENV"))
		}
		iss, res := str("LINKSLOT_ISSUER"), str("LINKSLOT_RESOURCE")
		if m := regexp.MustCompile(`^https://\$\{(PUBLIC_[A-Z_]+)[:?}]`).FindStringSubmatch(iss); m == nil {
			bad("service %s: LINKSLOT_ISSUER %q is not https://${PUBLIC_…}", name, iss)
		} else {
			issuerVar = m[1]
		}
		if m := regexp.MustCompile(`^https://\$\{(PUBLIC_[A-Z_]+)[:?][^}]*\}/mcp$`).FindStringSubmatch(res); m == nil {
			bad("service %s: LINKSLOT_RESOURCE %q is not https://${PUBLIC_…}/mcp", name, res)
		} else {
			resourceVar = m[1]
		}
		trusted := strings.Split(expandDefaults(str("LINKSLOT_TRUSTED_PROXIES")), ",")
		if !slices.ContainsFunc(trusted, func(p string) bool {
			if a, err := netip.ParseAddr(strings.TrimSpace(p)); err == nil {
				return a == addr
			}
			pf, err := netip.ParsePrefix(strings.TrimSpace(p))
			return err == nil && pf.Contains(addr) && pf.Bits() == addr.BitLen()
		}) {
			bad("service %s: LINKSLOT_TRUSTED_PROXIES %q is not Caddy's address %v", name, str("LINKSLOT_TRUSTED_PROXIES"), addr)
		}
		if !strings.HasPrefix(str("LINKSLOT_SMTP_URL"), "${LINKSLOT_SMTP_URL:?") {
			bad("service %s: LINKSLOT_SMTP_URL is not required from .env (production refuses to start without it)", name)
		}
	}
	for _, v := range []string{issuerVar, resourceVar} {
		if v == "" {
			continue
		}
		if !strings.HasPrefix(fmt.Sprint(caddy.Environment[v]), "${"+v) {
			bad("service caddy: environment does not pass %s to the Caddyfile", v)
		}
		if !slices.ContainsFunc(caddy.Networks["default"].Aliases, func(a string) bool { return strings.HasPrefix(a, "${"+v) }) {
			bad("service caddy: %s is not one of its network aliases (the resource server reaches the issuer through Caddy)", v)
		}
	}
	if ports := portsNode(overrideSrc, "authserver"); ports == nil || ports.Tag != "!reset" || len(ports.Content) != 0 {
		bad("service authserver: ports are not `!reset []`; the servers must be reached only through Caddy")
	}

	// The Caddyfile: each public name proxies to its server, without the
	// client's own Forwarded header.
	upstream := map[string]string{
		issuerVar:   "authserver:" + listenPort(base.Services["authserver"].Environment, "LINKSLOT_AUTH_LISTEN"),
		resourceVar: "authserver:" + listenPort(base.Services["authserver"].Environment, "LINKSLOT_RS_LISTEN"),
	}
	sites := parseCaddySites(caddyfile)
	for v, up := range upstream {
		if v == "" {
			continue
		}
		i := slices.IndexFunc(sites, func(s caddySite) bool { return s.address == "{$"+v+"}" })
		if i < 0 {
			bad("Caddyfile: no site {$%s}", v)
			continue
		}
		if !slices.Contains(sites[i].lines, "reverse_proxy "+up+" {") && !slices.Contains(sites[i].lines, "reverse_proxy "+up) {
			bad("Caddyfile: site {$%s} does not reverse_proxy to %s", v, up)
		}
		if !slices.Contains(sites[i].lines, "header_up -Forwarded") {
			bad("Caddyfile: site {$%s} passes the client's Forwarded header on", v)
		}
	}
	return problems
}

// portsNode is the YAML node of services.NAME.ports in src.
func portsNode(src []byte, name string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	n := doc.Content[0]
	for _, key := range []string{"services", name, "ports"} {
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func readDeploy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestComposeCaddy: the public HTTPS layer over the compose file
// (docs/deployment.md) serves both servers through Caddy only, in
// production, with https issuer and resource and Caddy as the one trusted
// proxy.
func TestComposeCaddy(t *testing.T) {
	base := loadCompose(t, readDeploy(t, "docker-compose.yml"))
	for _, p := range checkCaddy(base, readDeploy(t, "docker-compose.caddy.yml"), string(readDeploy(t, "Caddyfile"))) {
		t.Error(p)
	}
}

func TestComposeCaddyChecksCatchViolations(t *testing.T) {
	base := loadCompose(t, readDeploy(t, "docker-compose.yml"))
	goodO, goodC := string(readDeploy(t, "docker-compose.caddy.yml")), string(readDeploy(t, "Caddyfile"))
	tests := []struct{ name, file, from, to, want string }{
		{"unpinned caddy", "o", "image: caddy:2.10.2", "image: caddy:latest", "pinned"},
		{"plain http issuer", "o", "LINKSLOT_ISSUER: https://", "LINKSLOT_ISSUER: http://", "LINKSLOT_ISSUER"},
		{"development", "o", "LINKSLOT_ENV: production", "LINKSLOT_ENV: development", "production"},
		{"trusts everyone", "o", "LINKSLOT_TRUSTED_PROXIES: ${CADDY_ADDRESS:-172.30.53.10}", "LINKSLOT_TRUSTED_PROXIES: 0.0.0.0/0", "TRUSTED_PROXIES"},
		{"trusts nobody", "o", "LINKSLOT_TRUSTED_PROXIES: ${CADDY_ADDRESS:-172.30.53.10}", "LINKSLOT_TRUSTED_PROXIES: \"\"", "TRUSTED_PROXIES"},
		{"address outside the subnet", "o", "subnet: ${CADDY_SUBNET:-172.30.53.0/24}", "subnet: 10.9.0.0/24", "subnet"},
		{"servers still published", "o", "ports: !reset []", "ports: []", "!reset"},
		{"no alias for the issuer", "o", "          - ${PUBLIC_AUTH_HOST:?set PUBLIC_AUTH_HOST in deploy/.env}\n", "", "network aliases"},
		{"wrong upstream", "c", "reverse_proxy authserver:8081", "reverse_proxy authserver:8080", "reverse_proxy to authserver:8081"},
		{"Forwarded passed on", "c", "\t\theader_up -Forwarded\n\t}\n}\n\n# The MCP", "\t}\n}\n\n# The MCP", "Forwarded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := goodO, goodC
			src := &o
			if tt.file == "c" {
				src = &c
			}
			if !strings.Contains(*src, tt.from) {
				t.Fatalf("no %q to change", tt.from)
			}
			*src = strings.Replace(*src, tt.from, tt.to, 1)
			for _, p := range checkCaddy(base, []byte(o), c) {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Fatalf("no problem mentioning %q", tt.want)
		})
	}
}
