package deploy_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// servers are the two Deployments every render must carry, each with its
// HPA, PDB and Service.
var servers = []string{"authserver", "resourceserver"}

// obj is one rendered Kubernetes object.
type obj map[string]any

func (o obj) kind() string { s, _ := o["kind"].(string); return s }
func (o obj) name() string { return str(dig(o, "metadata", "name")) }
func (o obj) id() string   { return o.kind() + "/" + o.name() }

// dig walks maps by key and slices by int index; nil when absent.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				if o, ok2 := v.(obj); ok2 {
					m = o
				} else {
					return nil
				}
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }
func list(v any) []any { s, _ := v.([]any); return s }

// render builds a kustomization directory (relative to deploy/) exactly as
// `kubectl kustomize` would.
func render(t *testing.T, dir string) []obj {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // as kubectl: the kustomization's sortOptions decide
	k := krusty.MakeKustomizer(opts)
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []obj
	for _, r := range m.Resources() {
		mm, err := r.Map()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		out = append(out, obj(mm))
	}
	return out
}

func TestKustomizeRender(t *testing.T) {
	for _, dir := range []string{"k8s/base", "k8s/overlays/production"} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			if len(objs) == 0 {
				t.Fatal("nothing rendered")
			}
			for _, p := range checkManifests(objs) {
				t.Error(p)
			}
		})
	}
}

// TestProductionOverlay checks what the overlay promises beyond the
// invariants: namespace, pinned release tag, hostnames, replicas.
func TestProductionOverlay(t *testing.T) {
	objs := render(t, "k8s/overlays/production")
	release := regexp.MustCompile(`^ghcr\.io/linkslot/linkslot(:\d+\.\d+\.\d+|@sha256:[0-9a-f]{64})$`)
	var cm obj
	for _, o := range objs {
		if o.kind() != "Namespace" && str(dig(o, "metadata", "namespace")) != "linkslot" {
			t.Errorf("%s: namespace %q, want linkslot", o.id(), dig(o, "metadata", "namespace"))
		}
		for _, c := range containersOf(o) {
			if img := str(c["image"]); !release.MatchString(img) {
				t.Errorf("%s: image %q is not the pinned release", o.id(), img)
			}
		}
		switch o.kind() {
		case "ConfigMap":
			cm = o
		case "Deployment":
			if n, _ := dig(o, "spec", "replicas").(int); n < 3 {
				t.Errorf("%s: replicas %v, want >= 3", o.id(), dig(o, "spec", "replicas"))
			}
		case "HorizontalPodAutoscaler":
			minR, _ := dig(o, "spec", "minReplicas").(int)
			maxR, _ := dig(o, "spec", "maxReplicas").(int)
			if minR < 3 || maxR < minR {
				t.Errorf("%s: replicas %d..%d", o.id(), minR, maxR)
			}
		case "Ingress":
			for _, r := range list(dig(o, "spec", "rules")) {
				if h := str(dig(r, "host")); !strings.HasSuffix(h, ".linkslot.app") {
					t.Errorf("%s: host %q not the production hostname", o.id(), h)
				}
			}
		}
	}
	if cm == nil {
		t.Fatal("no ConfigMap")
	}
	for k, want := range map[string]string{
		"LINKSLOT_ISSUER":   "https://auth.linkslot.app",
		"LINKSLOT_RESOURCE": "https://mcp.linkslot.app/mcp",
		"LINKSLOT_ENV":      "production",
	} {
		if got := str(dig(cm, "data", k)); got != want {
			t.Errorf("ConfigMap %s = %q, want %q", k, got, want)
		}
	}
}

// TestChecksCatchViolations feeds the checker manifests with one
// violation each and expects it to be reported: a checker that passes
// everything would make TestKustomizeRender worthless.
func TestChecksCatchViolations(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(objs []obj) []obj
		want   string
	}{
		{"root user", setContainer("authserver", "securityContext", map[string]any{
			"runAsNonRoot": false, "runAsUser": 0, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
			"capabilities": map[string]any{"drop": []any{"ALL"}}}), "non-root"},
		{"writable root", setContainer("authserver", "securityContext", map[string]any{
			"runAsNonRoot": true, "readOnlyRootFilesystem": false, "allowPrivilegeEscalation": false,
			"capabilities": map[string]any{"drop": []any{"ALL"}}}), "readOnlyRootFilesystem"},
		{"no readiness probe", setContainer("resourceserver", "readinessProbe", nil), "readinessProbe"},
		{"no liveness probe", setContainer("resourceserver", "livenessProbe", nil), "livenessProbe"},
		{"latest tag", setContainer("authserver", "image", "ghcr.io/linkslot/linkslot:latest"), "not pinned"},
		{"missing tag", setContainer("authserver", "image", "ghcr.io/linkslot/linkslot"), "not pinned"},
		{"no limits", setContainer("authserver", "resources", map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Mi"}}), "limits"},
		{"secret literal in env", setContainer("authserver", "env", []any{
			map[string]any{"name": "LINKSLOT_SECRET_KEY", "value": "0123456789abcdef0123456789abcdef"}}), "literal"},
		{"password in url", setContainer("authserver", "env", []any{
			map[string]any{"name": "LINKSLOT_DATABASE_URL", "value": "postgres://linkslot:hunter2@db/linkslot"}}), "literal"},
		{"secret object", add(obj{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "linkslot-secrets"},
			"stringData": map[string]any{"LINKSLOT_SECRET_KEY": "x"}}), "Secret"},
		{"no hpa", drop("HorizontalPodAutoscaler", "resourceserver"), "HorizontalPodAutoscaler"},
		{"no pdb", drop("PodDisruptionBudget", "authserver"), "PodDisruptionBudget"},
		{"ingress to metrics", func(objs []obj) []obj {
			for _, o := range objs {
				if o.kind() == "Ingress" {
					port := dig(o, "spec", "rules", 0, "http", "paths", 0, "backend", "service", "port").(map[string]any)
					port["name"] = "metrics"
				}
			}
			return objs
		}, "metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := tt.mutate(render(t, "k8s/base"))
			problems := checkManifests(objs)
			for _, p := range problems {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Fatalf("no problem mentioning %q; got %q", tt.want, problems)
		})
	}
}

func setContainer(deployment, field string, v any) func([]obj) []obj {
	return func(objs []obj) []obj {
		for _, o := range objs {
			if o.kind() == "Deployment" && o.name() == deployment {
				c := dig(o, "spec", "template", "spec", "containers", 0).(map[string]any)
				if v == nil {
					delete(c, field)
				} else {
					c[field] = v
				}
			}
		}
		return objs
	}
}

func add(extra obj) func([]obj) []obj {
	return func(objs []obj) []obj { return append(objs, extra) }
}

func drop(kind, name string) func([]obj) []obj {
	return func(objs []obj) []obj {
		return slices.DeleteFunc(objs, func(o obj) bool { return o.kind() == kind && o.name() == name })
	}
}

// podSpecOf returns the pod spec of a workload, or nil.
func podSpecOf(o obj) map[string]any {
	switch o.kind() {
	case "Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet":
		m, _ := dig(o, "spec", "template", "spec").(map[string]any)
		return m
	case "CronJob":
		m, _ := dig(o, "spec", "jobTemplate", "spec", "template", "spec").(map[string]any)
		return m
	case "Pod":
		m, _ := dig(o, "spec").(map[string]any)
		return m
	}
	return nil
}

func containersOf(o obj) []map[string]any {
	ps := podSpecOf(o)
	if ps == nil {
		return nil
	}
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range list(ps[key]) {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

var (
	// An image is pinned by digest or by an explicit tag other than latest.
	pinnedImage = regexp.MustCompile(`^[a-z0-9.\-/:]+?(:[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127})?(@sha256:[0-9a-f]{64})?$`)
	// Names whose value must never be written down.
	secretName = regexp.MustCompile(`(?i)(secret|password|passwd|token|private|credential|api_?key|database_url|dsn)`)
	// Values that look like secrets wherever they appear: a URL with a
	// password, a long hex or base64 run, a PEM block.
	secretValue = regexp.MustCompile(`://[^/\s:@]+:[^/\s@]+@|^[A-Fa-f0-9]{32,}$|^[A-Za-z0-9+/_\-]{40,}={0,2}$|-----BEGIN`)
)

func imagePinned(img string) bool {
	if img == "" || !pinnedImage.MatchString(img) {
		return false
	}
	if strings.Contains(img, "@sha256:") {
		return true
	}
	i := strings.LastIndex(img, ":")
	if i < 0 || strings.Contains(img[i:], "/") { // the colon was a registry port
		return false
	}
	return img[i+1:] != "latest"
}

// checkManifests returns every invariant the rendered objects break.
func checkManifests(objs []obj) []string {
	var problems []string
	bad := func(o obj, format string, a ...any) {
		problems = append(problems, o.id()+": "+fmt.Sprintf(format, a...))
	}
	byKind := map[string]map[string]obj{}
	for _, o := range objs {
		if byKind[o.kind()] == nil {
			byKind[o.kind()] = map[string]obj{}
		}
		byKind[o.kind()][o.name()] = o
	}

	for _, o := range objs {
		switch o.kind() {
		case "Secret":
			bad(o, "a Secret is rendered; secrets are created out of band and referenced by name only")
		case "ConfigMap":
			for k, v := range asMap(o["data"]) {
				if secretName.MatchString(k) || secretValue.MatchString(fmt.Sprint(v)) {
					bad(o, "key %s looks like a secret literal in a ConfigMap", k)
				}
			}
		}
		ps := podSpecOf(o)
		if ps == nil {
			continue
		}
		podSC := asMap(ps["securityContext"])
		if ps["automountServiceAccountToken"] != false {
			bad(o, "automountServiceAccountToken is not false")
		}
		if str(dig(podSC, "seccompProfile", "type")) != "RuntimeDefault" {
			bad(o, "pod seccompProfile is not RuntimeDefault")
		}
		for _, c := range containersOf(o) {
			name := str(c["name"])
			sc := asMap(c["securityContext"])
			nonRoot := sc["runAsNonRoot"] == true || (sc["runAsNonRoot"] == nil && podSC["runAsNonRoot"] == true)
			uid, hasUID := sc["runAsUser"]
			if !hasUID {
				uid, hasUID = podSC["runAsUser"]
			}
			if !nonRoot || (hasUID && fmt.Sprint(uid) == "0") {
				bad(o, "container %s does not run as non-root", name)
			}
			if sc["readOnlyRootFilesystem"] != true {
				bad(o, "container %s: readOnlyRootFilesystem is not true", name)
			}
			if sc["allowPrivilegeEscalation"] != false {
				bad(o, "container %s: allowPrivilegeEscalation is not false", name)
			}
			if sc["privileged"] == true {
				bad(o, "container %s is privileged", name)
			}
			if !slices.Contains(list(dig(sc, "capabilities", "drop")), any("ALL")) {
				bad(o, "container %s does not drop ALL capabilities", name)
			}
			if img := str(c["image"]); !imagePinned(img) {
				bad(o, "container %s: image %q is not pinned (explicit tag or digest, never latest)", name, img)
			}
			for _, r := range []string{"requests", "limits"} {
				for _, q := range []string{"cpu", "memory"} {
					if dig(c, "resources", r, q) == nil {
						bad(o, "container %s: no resources.%s.%s (limits and requests are required)", name, r, q)
					}
				}
			}
			if o.kind() != "Job" && o.kind() != "CronJob" {
				for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
					if got := str(dig(c, probe, "httpGet", "path")); got != path {
						bad(o, "container %s: %s path %q, want %q", name, probe, got, path)
					}
				}
			}
			for _, e := range list(c["env"]) {
				en, v := str(dig(e, "name")), dig(e, "value")
				if v == nil {
					if ref := str(dig(e, "valueFrom", "secretKeyRef", "name")); ref != "" && ref != "linkslot-secrets" {
						bad(o, "container %s: env %s from unknown Secret %q", name, en, ref)
					}
					continue
				}
				if secretName.MatchString(en) || secretValue.MatchString(fmt.Sprint(v)) {
					bad(o, "container %s: env %s is a literal that looks like a secret; use secretKeyRef", name, en)
				}
			}
			for _, ef := range list(c["envFrom"]) {
				if ref := str(dig(ef, "configMapRef", "name")); ref != "" && byKind["ConfigMap"][ref] == nil {
					bad(o, "container %s: envFrom ConfigMap %q is not rendered", name, ref)
				}
			}
		}
	}

	for _, s := range servers {
		d := byKind["Deployment"][s]
		if d == nil {
			problems = append(problems, "Deployment/"+s+": missing")
			continue
		}
		podLabels := asMap(dig(d, "spec", "template", "metadata", "labels"))
		h := byKind["HorizontalPodAutoscaler"][s]
		switch {
		case h == nil:
			problems = append(problems, "HorizontalPodAutoscaler/"+s+": missing")
		case str(dig(h, "spec", "scaleTargetRef", "kind")) != "Deployment" || str(dig(h, "spec", "scaleTargetRef", "name")) != s:
			bad(h, "does not target Deployment/%s", s)
		case toInt(dig(h, "spec", "minReplicas")) < 2:
			bad(h, "minReplicas below 2: a single pod cannot honour its PodDisruptionBudget")
		}
		p := byKind["PodDisruptionBudget"][s]
		if p == nil {
			problems = append(problems, "PodDisruptionBudget/"+s+": missing")
		} else if !selects(asMap(dig(p, "spec", "selector", "matchLabels")), podLabels) {
			bad(p, "selector does not match Deployment/%s pods", s)
		}
		svc := byKind["Service"][s]
		if svc == nil {
			problems = append(problems, "Service/"+s+": missing")
		} else if !selects(asMap(dig(svc, "spec", "selector")), podLabels) {
			bad(svc, "selector does not match Deployment/%s pods", s)
		}
	}
	for _, ing := range byKind["Ingress"] {
		for _, r := range list(dig(ing, "spec", "rules")) {
			for _, p := range list(dig(r, "http", "paths")) {
				svc := str(dig(p, "backend", "service", "name"))
				port := dig(p, "backend", "service", "port")
				if byKind["Service"][svc] == nil {
					bad(ing, "backend Service %q is not rendered", svc)
				}
				if str(dig(port, "name")) == "metrics" || toInt(dig(port, "number")) == 9090 {
					bad(ing, "routes the metrics port of %s to the outside", svc)
				}
			}
		}
	}
	if len(byKind["Ingress"]) == 0 {
		problems = append(problems, "Ingress: missing")
	}
	if byKind["Job"]["linkslot-migrate"] == nil {
		problems = append(problems, "Job/linkslot-migrate: missing")
	}
	if cj := byKind["CronJob"]["linkslot-keys-rotate"]; cj == nil {
		problems = append(problems, "CronJob/linkslot-keys-rotate: missing")
	} else if args := list(dig(cj, "spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "args")); fmt.Sprint(args) != "[keys rotate]" {
		bad(cj, "args %v, want [keys rotate]", args)
	}
	return problems
}

func asMap(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case obj:
		return m
	}
	return nil
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// selects reports whether a non-empty selector matches labels.
func selects(selector, labels map[string]any) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
