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
	if len(raw) > toolsListByteBudget {
		t.Errorf("tools/list result of %d bytes, budget %d", len(raw), toolsListByteBudget)
	}
}

// The budgets: what the descriptions and schemas may grow to before
// someone has to decide it is worth an agent's tokens.
const (
	descriptionWordBudget  = 1000
	outputSchemaByteBudget = 100000
	toolsListByteBudget    = 1000000
)
