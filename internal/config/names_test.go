package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestUnknownNamesTheNearest(t *testing.T) {
	got := Unknown([]string{
		"PATH=/bin",
		"LINKSLOT_DATABSE_URL=sqlite://x.db", // a letter dropped
		"LINKSLOT_ISUSER=http://x",           // a swapped pair
		"LINKSLOT_DATABASE_URL=sqlite://y.db",
		"LINKSLOT_TEST_POSTGRES_URL=postgres://h/db", // the tests' own
		"LINKSLOT_BANANA=1",
		"LINKSLOT_DATABSE_URL=again",
	})
	want := []string{
		"unknown variable LINKSLOT_BANANA: Linkslot reads no such variable (docs/reference.md §1 lists them); it has no effect",
		"unknown variable LINKSLOT_DATABSE_URL: did you mean LINKSLOT_DATABASE_URL?",
		"unknown variable LINKSLOT_ISUSER: did you mean LINKSLOT_ISSUER?",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Unknown =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Unknown([]string{"LINKSLOT_ENV=production", "LINKSLOT_DEBUG=1", "HOME=/root"}); len(got) != 0 {
		t.Errorf("known variables reported: %q", got)
	}
}

// TestKnownIsComplete: every LINKSLOT_ name written in the repository's
// Go code (tests aside), scripts and deployment files is either read by
// the servers (Known) or one of the tooling names, so that a variable
// added in one place is never reported as a mistake, and the known list
// is the one FromEnv reads.
func TestKnownIsComplete(t *testing.T) {
	for _, want := range []string{"LINKSLOT_DATABASE_URL", "LINKSLOT_OUTBOX_LEASE", "LINKSLOT_SMTP_URL", "LINKSLOT_DEBUG", "LINKSLOT_METRICS_LISTEN"} {
		if !slices.Contains(Known(), want) {
			t.Errorf("Known() lacks %s: %v", want, Known())
		}
	}
	root := filepath.Join("..", "..")
	name := regexp.MustCompile(`\bLINKSLOT_[A-Z0-9_]*[A-Z0-9]\b`)
	seen := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "var", "bin", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		ext := filepath.Ext(path)
		script := strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) && ext == ""
		if ext != ".go" && ext != ".yaml" && ext != ".yml" && !script && d.Name() != "Makefile" && d.Name() != "Dockerfile" {
			return nil
		}
		if filepath.Dir(rel) == filepath.Join("internal", "config") || strings.HasSuffix(path, "_test.go") {
			return nil // tests misspell names on purpose, as this package's docs do
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(b), -1) {
			seen[n] = rel
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 20 {
		t.Fatalf("found only %d names; is the walk looking at the repository?", len(seen))
	}
	for n, where := range seen {
		if !slices.Contains(Known(), n) && !slices.Contains(tooling, n) {
			t.Errorf("%s (in %s) is neither read by config.FromEnv nor listed in readElsewhere or tooling (names.go)", n, where)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"DATABSE_URL", "DATABASE_URL", 1}, {"ISUSER", "ISSUER", 1}, {"AB", "BA", 1}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
