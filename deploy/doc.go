// Package deploy holds Linkslot's deployment files — the container image,
// the compose file, the Kubernetes manifests and the alert rules — and the
// tests that keep them honest without a container engine or a cluster:
// the Dockerfile is parsed and its stages, base-image pins, static build and
// non-root user checked; the compose file is checked for health checks, the
// migration dependency and secret literals, and its Caddy override and the
// Caddyfile for public HTTPS and the one trusted proxy; the kustomize base and the
// production overlay are rendered with sigs.k8s.io/kustomize/api and every
// object checked against the invariants in deploy/README.md; the alert rules
// are checked against the metric families internal/metrics exports.
//
// There is no code to import here; the package exists for its tests.
package deploy
