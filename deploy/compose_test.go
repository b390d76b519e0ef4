package deploy_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string         `yaml:"image"`
	Entrypoint  []string       `yaml:"entrypoint"`
	Command     []string       `yaml:"command"`
	EnvFile     []string       `yaml:"env_file"`
	Environment map[string]any `yaml:"environment"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	ReadOnly    bool     `yaml:"read_only"`
	CapDrop     []string `yaml:"cap_drop"`
	NetworkMode string   `yaml:"network_mode"`
	Restart     string   `yaml:"restart"`
}

// interpolated is a value that only refers to variables from .env.
var interpolated = regexp.MustCompile(`^\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}$`)

// checkCompose returns every property of the compose file it breaks.
func checkCompose(c composeFile) []string {
	var problems []string
	bad := func(svc, format string, a ...any) {
		problems = append(problems, "service "+svc+": "+fmt.Sprintf(format, a...))
	}
	for _, need := range []string{"postgres", "migrate", "authserver", "resourceserver"} {
		if _, ok := c.Services[need]; !ok {
			problems = append(problems, "service "+need+": missing")
		}
	}
	for name, s := range c.Services {
		img := expandDefaults(s.Image)
		if !imagePinned(img) {
			bad(name, "image %q is not pinned", s.Image)
		}
		for k, v := range s.Environment {
			val, _ := v.(string)
			if secretName.MatchString(k) || secretValue.MatchString(val) {
				// Allowed: a pure ${VAR} reference, or a URL whose
				// password part is one.
				stripped := regexp.MustCompile(`\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}`).ReplaceAllString(val, "")
				if !interpolated.MatchString(val) && (secretValue.MatchString(stripped) || !strings.Contains(val, "${")) {
					bad(name, "environment %s holds a literal secret; use ${VAR} from .env", k)
				}
			}
		}
		for _, f := range s.EnvFile {
			if f != ".env" {
				bad(name, "env_file %q: secrets come from the git-ignored .env only", f)
			}
		}
	}
	pg := c.Services["postgres"]
	if !regexp.MustCompile(`^postgres:15\.\d+`).MatchString(pg.Image) {
		bad("postgres", "image %q is not an exact PostgreSQL 15 tag", pg.Image)
	}
	if pg.Healthcheck == nil || !slices.Contains(pg.Healthcheck.Test, "pg_isready") {
		bad("postgres", "no pg_isready health check")
	}
	m := c.Services["migrate"]
	if argv := append(slices.Clone(m.Entrypoint), m.Command...); !slices.Contains(argv, "migrate") {
		bad("migrate", "does not run `authserver migrate` (argv %q)", argv)
	}
	if m.Restart != "no" {
		bad("migrate", "restart %q; a one-shot job must not restart", m.Restart)
	}
	if m.DependsOn["postgres"].Condition != "service_healthy" {
		bad("migrate", "does not wait for a healthy postgres")
	}
	for _, s := range []struct{ name, port, metricsVar string }{{"authserver", "8080", "LINKSLOT_AUTH_METRICS_LISTEN"}, {"resourceserver", "8081", "LINKSLOT_RS_METRICS_LISTEN"}} {
		svc := c.Services[s.name]
		if svc.DependsOn["migrate"].Condition != "service_completed_successfully" {
			bad(s.name, "does not depend on migrate with service_completed_successfully")
		}
		if svc.DependsOn["postgres"].Condition != "service_healthy" {
			bad(s.name, "does not wait for a healthy postgres")
		}
		if svc.Healthcheck == nil || !slices.ContainsFunc(svc.Healthcheck.Test, func(a string) bool {
			return strings.HasSuffix(a, ":"+s.port+"/readyz")
		}) {
			bad(s.name, "no health check on :%s/readyz", s.port)
		}
		if !svc.ReadOnly || !slices.Contains(svc.CapDrop, "ALL") {
			bad(s.name, "not read_only with cap_drop ALL")
		}
		for _, k := range []string{"LINKSLOT_DATABASE_URL", "LINKSLOT_LOG_FORMAT", s.metricsVar} {
			if _, ok := svc.Environment[k]; !ok {
				bad(s.name, "environment lacks %s", k)
			}
		}
	}
	return problems
}

// expandDefaults replaces ${VAR:-default} by its default, as compose does
// when VAR is unset.
func expandDefaults(s string) string {
	return regexp.MustCompile(`\$\{[A-Z0-9_]+:?-([^}]*)\}`).ReplaceAllString(s, "$1")
}

func loadCompose(t *testing.T, src []byte) composeFile {
	t.Helper()
	var c composeFile
	if err := yaml.Unmarshal(src, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

func TestCompose(t *testing.T) {
	src, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkCompose(loadCompose(t, src)) {
		t.Error(p)
	}
}

func TestComposeChecksCatchViolations(t *testing.T) {
	good, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, from, to, want string }{
		{"literal password", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in deploy/.env}", "POSTGRES_PASSWORD: hunter2hunter2", "literal secret"},
		{"password in url", "linkslot:${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in deploy/.env}@postgres", "linkslot:hunter2@postgres", "literal secret"},
		{"secret key literal", "LINKSLOT_LOG_FORMAT: json", "LINKSLOT_LOG_FORMAT: json\n    LINKSLOT_SECRET_KEY: 0123456789abcdef0123456789abcdef", "literal secret"},
		{"no completion wait", "condition: service_completed_successfully", "condition: service_started", "service_completed_successfully"},
		{"unpinned postgres", "image: postgres:15.18-bookworm", "image: postgres", "not pinned"},
		{"latest image", "ghcr.io/linkslot/linkslot:1.0.0", "ghcr.io/linkslot/linkslot:latest", "not pinned"},
		{"no healthcheck", `test: ["CMD", "/usr/local/bin/healthprobe", "http://127.0.0.1:8081/readyz"]`, `test: ["CMD", "true"]`, ":8081/readyz"},
		{"committed env file", "    - .env\n", "    - .env.example\n", "env_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := string(good)
			if !strings.Contains(src, tt.from) {
				t.Fatalf("compose file has no %q", tt.from)
			}
			src = strings.Replace(src, tt.from, tt.to, 1)
			for _, p := range checkCompose(loadCompose(t, []byte(src))) {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Fatalf("no problem mentioning %q", tt.want)
		})
	}
}

// TestEnvExample: the example holds placeholders only, .env is ignored,
// and every variable the deploy files set is one internal/config reads.
func TestEnvExample(t *testing.T) {
	ex, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ex), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if secretName.MatchString(k) && v != "CHANGE-ME" {
			t.Errorf(".env.example %s = %q; secrets must be the CHANGE-ME placeholder", k, v)
		}
	}
	ign, err := os.ReadFile(".gitignore")
	if err != nil || !slices.Contains(strings.Fields(string(ign)), ".env") {
		t.Errorf("deploy/.gitignore does not ignore .env")
	}

	cfg, err := os.ReadFile("../internal/config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(LINKSLOT_[A-Z_]+)"`).FindAllStringSubmatch(string(cfg), -1) {
		known[m[1]] = true
	}
	used := regexp.MustCompile(`\bLINKSLOT_[A-Z_]+\b`)
	for _, f := range []string{"docker-compose.yml", "docker-compose.caddy.yml", "Caddyfile", ".env.example", "Dockerfile", "k8s/base/configmap.yaml", "k8s/overlays/production/config.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range used.FindAllString(string(b), -1) {
			if !known[v] && v != "LINKSLOT_IMAGE" {
				t.Errorf("%s sets %s, which internal/config does not read", f, v)
			}
		}
	}
}
