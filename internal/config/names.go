package config

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Prefix begins the name of every variable Linkslot reads.
const Prefix = "LINKSLOT_"

// readElsewhere are the variables the servers read outside FromEnv.
var readElsewhere = []string{
	"LINKSLOT_DEBUG", // app.Logger: debug-level logs
}

// tooling are the variables only the project's own tests, benchmarks and
// deployment files read. They are not mistakes, so they are not reported,
// but no server reads them either.
var tooling = []string{
	"LINKSLOT_TEST_POSTGRES_URL", "LINKSLOT_TEST_LOG", "LINKSLOT_TEST_PG_BIN", "LINKSLOT_TEST_PG_RUNAS",
	"LINKSLOT_TEST_PG_PORT", "LINKSLOT_TEST_PG_DATA",
	"LINKSLOT_SCREENSHOT_DIR", "LINKSLOT_PLAN_REPORT", "LINKSLOT_SAFEFETCH_CERTFILE_URL",
	"LINKSLOT_CLUSTER_FULL", "LINKSLOT_CLUSTER_LOAD", "LINKSLOT_CLUSTER_LOAD_DUR",
	"LINKSLOT_IMAGE", "LINKSLOT_CLIENT_METADATA_URL",
	"LINKSLOT_MCP_URL", "LINKSLOT_EMAIL", "LINKSLOT_PASSWORD", "LINKSLOT_QUERY", "LINKSLOT_INSPECTOR",
}

var known = sync.OnceValue(func() []string {
	// FromEnv is run once over an empty environment, recording every name
	// it asks for: a variable added to FromEnv is known without a second
	// list to keep in step. FromEnv reads every variable on every run
	// (none only when another is set), which TestKnownIsComplete holds.
	seen := map[string]bool{}
	_, _ = FromEnv(func(k string) string { seen[k] = true; return "" })
	for _, k := range readElsewhere {
		seen[k] = true
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
})

// Known lists, sorted, every LINKSLOT_ variable the servers and the
// commands read.
func Known() []string { return slices.Clone(known()) }

// Unknown names each LINKSLOT_ variable of environ (os.Environ's KEY=value
// form) that Linkslot does not read, one message each, sorted, with the
// nearest known name when one is close: "unknown variable
// LINKSLOT_DATABSE_URL: did you mean LINKSLOT_DATABASE_URL?".
//
// These are warnings, not errors (docs/reference.md §15): the deployment
// may set LINKSLOT_-prefixed variables for tooling of its own, and a
// server that refused to start over a name it never reads would be an
// outage for a typo in something unrelated. The misspelt variable still
// leaves its setting at the default, so the warning is logged at every
// start of both servers and every command.
func Unknown(environ []string) []string {
	var msgs []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, Prefix) || slices.Contains(known(), name) || slices.Contains(tooling, name) {
			continue
		}
		if near := nearest(name); near != "" {
			msgs = append(msgs, fmt.Sprintf("unknown variable %s: did you mean %s?", name, near))
		} else {
			msgs = append(msgs, fmt.Sprintf("unknown variable %s: Linkslot reads no such variable (docs/reference.md §1 lists them); it has no effect", name))
		}
	}
	slices.Sort(msgs)
	return slices.Compact(msgs)
}

// nearest is the known name closest to name by edit distance, when it is
// close enough to be a slip of the keyboard: at most 3 edits, and fewer
// than a third of the name after the prefix.
func nearest(name string) string {
	best, bestD := "", 0
	suffix := strings.TrimPrefix(name, Prefix)
	for _, k := range known() {
		d := editDistance(suffix, strings.TrimPrefix(k, Prefix))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > 3 || 3*bestD >= len(suffix) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting an
// adjacent transposition as one edit (a swapped pair is the commonest
// slip).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
