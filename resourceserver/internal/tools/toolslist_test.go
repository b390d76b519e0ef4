package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/testkit"
)

// listTools answers tools/list and initialize's instructions through the
// MCP Go SDK's client, over in-memory transports: what an agent reads
// before its first call. No tool is called, so the domain does nothing.
func listTools(t testing.TB) (instructions string, raw []byte, tools []*mcp.Tool) {
	t.Helper()
	ctx := context.Background()
	s := NewServer(Deps{Domain: testkit.NoopDomain{}, Mutations: &mutation.Service{}}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "measure", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err = json.Marshal(lr)
	if err != nil {
		t.Fatal(err)
	}
	return cs.InitializeResult().Instructions, raw, lr.Tools
}

// TestToolsListSize measures what an agent reads before its first call —
// words per description, bytes of each schema, bytes of the whole
// tools/list result — and holds the budgets docs/tool-descriptions.md
// explains. Print the table with
//
//	go test ./resourceserver/internal/tools -run TestToolsListSize -v
func TestToolsListSize(t *testing.T) {
	instr, raw, tools := listTools(t)
	var b strings.Builder
	fmt.Fprintf(&b, "%-30s %6s %8s %8s %8s\n", "tool", "words", "desc B", "input B", "output B")
	for _, tool := range tools {
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		words := len(strings.Fields(tool.Description))
		fmt.Fprintf(&b, "%-30s %6d %8d %8d %8d\n", tool.Name, words, len(tool.Description), len(in), len(out))
		if words > descriptionWordBudget {
			t.Errorf("%s: %d words of description, budget %d", tool.Name, words, descriptionWordBudget)
		}
		if len(out) > outputSchemaByteBudget {
			t.Errorf("%s: output schema of %d bytes, budget %d", tool.Name, len(out), outputSchemaByteBudget)
		}
	}
	fmt.Fprintf(&b, "%-30s %6d %8d\n", "(server instructions)", len(strings.Fields(instr)), len(instr))
	fmt.Fprintf(&b, "tools/list result: %d tools, %d bytes (compact JSON)\n", len(tools), len(raw))
	t.Log("\n" + b.String())
	if len(raw) > toolsListByteBudget*len(tools) {
		t.Errorf("tools/list result of %d bytes, budget %d a tool", len(raw), toolsListByteBudget)
	}
}

// The budgets: what the descriptions and schemas may grow to before
// someone has to decide it is worth an agent's tokens
// (docs/tool-descriptions.md). Before issue 46 the mutations' descriptions
// were 333–422 words and their output schemas 5.5 KB; tools/list was
// 49,309 bytes for eight tools.
const (
	descriptionWordBudget  = 200
	outputSchemaByteBudget = 5500
	// per tool, on average, over the whole tools/list result: 6,000 for
	// the eight tools of issue 46, 6,700 since §16's two mutations joined
	// (each carries its own copy of the shared definitions, which a
	// client cannot reference across tools: 65.7 KB for ten tools)
	toolsListByteBudget = 6700
)

// TestProtocolSaidOnce: the mutation protocol is in the server
// instructions, in full; every mutation's description opens with the
// same short reference to it (within its first two sentences) and does
// not repeat the rest.
func TestProtocolSaidOnce(t *testing.T) {
	instr, _, tools := listTools(t)
	for _, must := range []string{"confirmation_required", "missing_idempotency_key", "summary_changed", "idempotent_replay",
		"idempotency_conflict", "48 hours", "already_cancelled", "notified"} {
		if !strings.Contains(instr, must) {
			t.Errorf("the instructions do not say %s", must)
		}
	}
	if n := len(strings.Fields(protocolRef)); n > 60 {
		t.Errorf("protocolRef is %d words; about 60 at most", n)
	}
	mutations := 0
	for _, tool := range tools {
		if tool.Annotations == nil || tool.Annotations.ReadOnlyHint {
			if strings.Contains(tool.Description, "confirmation_summary_presented") {
				t.Errorf("read tool %s speaks of the mutation protocol", tool.Name)
			}
			continue
		}
		mutations++
		i := strings.Index(tool.Description, protocolRef)
		if i < 0 || strings.Count(tool.Description[:i], ". ") > 1 {
			t.Errorf("%s does not open with the protocol reference", tool.Name)
		}
		for _, repeated := range []string{"idempotent_replay", "idempotency_conflict", "missing_idempotency_key", "summary_changed"} {
			if strings.Contains(tool.Description, repeated) {
				t.Errorf("%s repeats the instructions' %s", tool.Name, repeated)
			}
		}
	}
	if mutations < 3 {
		t.Fatalf("%d mutation tools listed", mutations)
	}
}
