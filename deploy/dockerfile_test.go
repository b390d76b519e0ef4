package deploy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	line  int    // first line, 1-based
	cmd   string // upper-cased: FROM, RUN, COPY, …
	flags map[string]string
	args  string // the rest, flags removed
}

// stage is one FROM … [AS name] and the instructions under it.
type stage struct {
	image, name string
	instrs      []instruction
}

// parseDockerfile is a small Dockerfile reader: parser directives and
// comments skipped, backslash continuations joined, leading --flags split
// off. Heredocs are not supported (and not used).
func parseDockerfile(src string) ([]stage, error) {
	var (
		stages []stage
		cur    strings.Builder
		start  int
	)
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		cmd, rest, _ := strings.Cut(text, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), flags: map[string]string{}}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			var f string
			f, rest, _ = strings.Cut(rest, " ")
			k, v, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
			in.flags[k] += v
			rest = strings.TrimSpace(rest)
		}
		in.args = rest
		if strings.Contains(in.args, "<<") && in.cmd == "RUN" {
			return fmt.Errorf("line %d: heredocs are not supported by this parser", start)
		}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				return fmt.Errorf("line %d: malformed FROM %q", start, in.args)
			}
			stages = append(stages, st)
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				return fmt.Errorf("line %d: %s before the first FROM", start, in.cmd)
			}
			return nil
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(src))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue // comments and directives; blank lines inside a continuation are allowed
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation runs past the end of the file", start)
	}
	return stages, flush()
}

var (
	goImageRE    = regexp.MustCompile(`^golang:(\d+)\.(\d+)\.(\d+)(-[a-z0-9]+)?(@sha256:[0-9a-f]{64})?$`)
	goModGoRE    = regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`)
	distrolessRE = regexp.MustCompile(`^gcr\.io/distroless/static-debian\d+:(nonroot|[0-9][0-9a-z._-]*)(@sha256:[0-9a-f]{64})?$|^gcr\.io/distroless/static-debian\d+@sha256:[0-9a-f]{64}$`)
)

// checkDockerfile returns every property of the image build the Dockerfile
// breaks.
func checkDockerfile(stages []stage, goMod string) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if len(stages) < 2 {
		return []string{fmt.Sprintf("want a multi-stage build, found %d stage(s)", len(stages))}
	}
	names := map[string]int{}
	for i, st := range stages {
		if st.name != "" {
			names[st.name] = i
		}
		if !imagePinned(st.image) {
			bad("stage %d: base image %q is not pinned (exact tag or digest, never latest)", i, st.image)
		}
		for _, in := range st.instrs {
			if in.cmd == "ADD" && regexp.MustCompile(`https?://`).MatchString(in.args) {
				bad("line %d: ADD of a URL; download in a RUN with a checksum instead", in.line)
			}
		}
	}

	build := stages[0]
	if m := goImageRE.FindStringSubmatch(build.image); m == nil {
		bad("builder %q is not an exact golang:X.Y.Z image", build.image)
	} else if g := goModGoRE.FindStringSubmatch(goMod); g != nil && (atoi(m[1]) < atoi(g[1]) || atoi(m[1]) == atoi(g[1]) && atoi(m[2]) < atoi(g[2])) {
		bad("builder Go %s.%s is older than go.mod's go %s.%s", m[1], m[2], g[1], g[2])
	}
	cgoOff := false
	built := map[string]bool{}
	for _, in := range build.instrs {
		if (in.cmd == "ENV" || in.cmd == "ARG" || in.cmd == "RUN") && regexp.MustCompile(`\bCGO_ENABLED=0\b`).MatchString(in.args) {
			cgoOff = true
		}
		if in.cmd == "RUN" {
			for _, m := range regexp.MustCompile(`go build [^&;]*?(\./[a-z/]+)`).FindAllStringSubmatch(in.args, -1) {
				built[m[1]] = true
			}
		}
	}
	if !cgoOff {
		bad("builder does not set CGO_ENABLED=0: the runtime image has no libc")
	}
	for _, pkg := range []string{"./authserver", "./resourceserver"} {
		if !built[pkg] {
			bad("builder does not go build %s", pkg)
		}
	}

	final := stages[len(stages)-1]
	if !distrolessRE.MatchString(final.image) {
		bad("final stage %q is not gcr.io/distroless/static", final.image)
	}
	user, copied := "", map[string]bool{}
	var entrypoint string
	for _, in := range final.instrs {
		switch in.cmd {
		case "USER":
			user = in.args
		case "RUN":
			bad("line %d: RUN in the final stage; the runtime image has no shell", in.line)
		case "COPY":
			from := in.flags["from"]
			if _, ok := names[from]; !ok {
				continue
			}
			for _, f := range strings.Fields(in.args) {
				copied[f[strings.LastIndex(f, "/")+1:]] = true
			}
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	if u, _, _ := strings.Cut(user, ":"); user == "" || u == "root" || u == "0" {
		bad("final stage USER %q is not a non-root user", user)
	} else if !regexp.MustCompile(`^[1-9][0-9]*(:[0-9]+)?$`).MatchString(user) {
		bad("final stage USER %q is not numeric; Kubernetes runAsNonRoot cannot verify a name", user)
	}
	for _, bin := range []string{"authserver", "resourceserver", "healthprobe"} {
		if !copied[bin] {
			bad("final stage does not COPY --from the builder the %s binary", bin)
		}
	}
	var argv []string
	if err := json.Unmarshal([]byte(entrypoint), &argv); err != nil || len(argv) == 0 {
		bad("ENTRYPOINT %q is not exec form (a JSON array); there is no shell", entrypoint)
	}
	return problems
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkDockerfile(stages, string(goMod)) {
		t.Error(p)
	}
	if stages[0].name == "" {
		t.Error("the builder stage has no name to COPY --from")
	}
}

// TestDockerfileChecksCatchViolations runs the checker on Dockerfiles
// with one fault each.
func TestDockerfileChecksCatchViolations(t *testing.T) {
	good, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	goMod := "module x\n\ngo 1.26.0\n"
	tests := []struct{ name, from, to, want string }{
		{"single stage", "FROM gcr.io/distroless/static-debian12:nonroot AS runtime", "", "multi-stage"},
		{"latest builder", "FROM golang:1.26.8-bookworm AS build", "FROM golang:latest AS build", "not pinned"},
		{"untagged runtime", "FROM gcr.io/distroless/static-debian12:nonroot AS runtime", "FROM gcr.io/distroless/static-debian12 AS runtime", "not pinned"},
		{"inexact go", "FROM golang:1.26.8-bookworm AS build", "FROM golang:1.26-bookworm AS build", "exact golang"},
		{"old go", "FROM golang:1.26.8-bookworm AS build", "FROM golang:1.25.3-bookworm AS build", "older than go.mod"},
		{"cgo on", "ENV CGO_ENABLED=0", "ENV CGO_ENABLED=1", "CGO_ENABLED=0"},
		{"root user", "USER 65532:65532", "USER root", "non-root"},
		{"named user", "USER 65532:65532", "USER nonroot", "not numeric"},
		{"no user", "USER 65532:65532", "", "non-root"},
		{"missing binary", "COPY --from=build /out/resourceserver /usr/local/bin/resourceserver", "", "resourceserver binary"},
		{"shell entrypoint", `ENTRYPOINT ["/usr/local/bin/authserver"]`, "ENTRYPOINT /usr/local/bin/authserver", "exec form"},
		{"run in final", "WORKDIR /tmp", "RUN mkdir /data", "RUN in the final stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := string(good)
			if !strings.Contains(src, tt.from) {
				t.Fatalf("Dockerfile has no %q to replace", tt.from)
			}
			if tt.name == "single stage" {
				src = src[strings.Index(src, tt.from):]
			} else {
				src = strings.Replace(src, tt.from, tt.to, 1)
			}
			stages, err := parseDockerfile(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range checkDockerfile(stages, goMod) {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Fatalf("no problem mentioning %q", tt.want)
		})
	}
}

func TestParseDockerfile(t *testing.T) {
	src := "# syntax=docker/dockerfile:1.7\nARG X=1\nFROM a:1 AS one\nRUN --mount=type=cache,target=/x \\\n    echo hi && \\\n    # a comment inside\n    echo there\nFROM b:2\nCOPY --from=one /a /b\n"
	stages, err := parseDockerfile(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || stages[0].name != "one" || stages[1].image != "b:2" {
		t.Fatalf("stages %+v", stages)
	}
	run := stages[0].instrs[1]
	if run.cmd != "RUN" || run.flags["mount"] != "type=cache,target=/x" || run.args != "echo hi &&  echo there" || run.line != 4 {
		t.Fatalf("run %+v", run)
	}
	if cp := stages[1].instrs[1]; cp.flags["from"] != "one" || cp.args != "/a /b" {
		t.Fatalf("copy %+v", cp)
	}
	if _, err := parseDockerfile("FROM a:1\nRUN echo \\\n"); err == nil {
		t.Fatal("dangling continuation accepted")
	}
}
