package rshttp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server does not validate its answers against the tools' output
// schemas on every call (tools.registry says why); the tests do, on every
// answer they receive through the MCP client (callOK, agent.try) and in
// every golden transcript, against the schemas tools/list declares.

// outputSchemas resolves the output schema of every listed tool.
func outputSchemas(t testing.TB, listed []*mcp.Tool) map[string]*jsonschema.Resolved {
	t.Helper()
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range listed {
		if tool.OutputSchema == nil {
			t.Fatalf("tool %s lists no output schema", tool.Name)
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("tool %s: output schema: %v", tool.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("tool %s: resolve output schema: %v", tool.Name, err)
		}
		out[tool.Name] = r
	}
	return out
}

// matchesOutputSchema fails t unless structured (the structuredContent of
// an answer of tool) validates against the tool's listed output schema.
func matchesOutputSchema(t testing.TB, schemas map[string]*jsonschema.Resolved, tool string, structured any) {
	t.Helper()
	r := schemas[tool]
	if r == nil {
		t.Fatalf("answer of %s, which tools/list does not name", tool)
	}
	b, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(&v); err != nil {
		t.Fatalf("answer of %s does not match its output schema: %v\n%s", tool, err, b)
	}
}

var sessionSchemas sync.Map // *mcp.ClientSession → map[string]*jsonschema.Resolved

// checkAnswer validates one answer received through cs.
func checkAnswer(t testing.TB, cs *mcp.ClientSession, tool string, res *mcp.CallToolResult) {
	t.Helper()
	s, ok := sessionSchemas.Load(cs)
	if !ok {
		lr, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		s, _ = sessionSchemas.LoadOrStore(cs, outputSchemas(t, lr.Tools))
	}
	matchesOutputSchema(t, s.(map[string]*jsonschema.Resolved), tool, res.StructuredContent)
}

// checkTranscript validates the answer raw to the JSON-RPC request body
// when it is a tools/call with structured content.
func (e *env) checkTranscript(t testing.TB, token, body, raw string) {
	t.Helper()
	var req struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var ans struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(body), &req) != nil || req.Method != "tools/call" ||
		json.Unmarshal([]byte(raw), &ans) != nil || ans.Result.StructuredContent == nil {
		return
	}
	resp := e.rpc(token, toolsList, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	var lr struct {
		Result mcp.ListToolsResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(readBody(t, resp)), &lr); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	matchesOutputSchema(t, outputSchemas(t, lr.Result.Tools), req.Params.Name, ans.Result.StructuredContent)
}
