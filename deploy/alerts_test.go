package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestAlertRules: every alert uses only metric families internal/metrics
// exports, has a severity and a runbook anchor that exists in
// docs/operations.md, and the four alerts the operations guide promises
// (database down, token errors, booking conflicts, key expiry) exist.
func TestAlertRules(t *testing.T) {
	src, err := os.ReadFile("prometheus/linkslot-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(src, &rf); err != nil {
		t.Fatal(err)
	}

	exported := map[string]bool{}
	files, _ := filepath.Glob("../internal/metrics/*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(linkslot_[a-z0-9_]+)"`).FindAllStringSubmatch(string(b), -1) {
			exported[m[1]] = true
		}
	}
	if len(exported) < 10 {
		t.Fatalf("found only %d metric names in internal/metrics", len(exported))
	}

	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[githubAnchor(m[1])] = true
	}

	seen := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			seen[r.Alert] = true
			for _, name := range regexp.MustCompile(`\blinkslot_[a-z0-9_]+`).FindAllString(r.Expr, -1) {
				base := regexp.MustCompile(`_(bucket|sum|count)$`).ReplaceAllString(name, "")
				if !exported[name] && !exported[base] {
					t.Errorf("%s: metric %s is not exported by internal/metrics", r.Alert, name)
				}
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") || strings.Count(r.Expr, "{") != strings.Count(r.Expr, "}") {
				t.Errorf("%s: unbalanced expression", r.Alert)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q", r.Alert, s)
			}
			_, anchor, ok := strings.Cut(r.Annotations["runbook"], "docs/operations.md#")
			if !ok || !anchors[anchor] {
				t.Errorf("%s: runbook %q has no heading in docs/operations.md", r.Alert, r.Annotations["runbook"])
			}
		}
	}
	for _, want := range []string{"LinkslotDatabaseDown", "LinkslotTokenErrorSpike", "LinkslotBookingConflictSpike", "LinkslotSigningKeyExpired"} {
		if !seen[want] {
			t.Errorf("alert %s missing", want)
		}
	}
}

// githubAnchor is the id GitHub gives a Markdown heading.
func githubAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
