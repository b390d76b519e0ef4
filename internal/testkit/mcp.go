package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// FindString returns the first string stored under key anywhere in v (a
// decoded JSON value: maps and slices are searched depth first), or "" when
// there is none. Map order is Go's, so a key present at several depths of
// one map may be found at any of them; the direct child is always preferred.
func FindString(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x[key].(string); ok {
			return s
		}
		for _, e := range x {
			if s := FindString(e, key); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := FindString(e, key); s != "" {
				return s
			}
		}
	}
	return ""
}

// ConfirmedArgs returns a copy of args plus the confirmation protocol's
// fields: confirmed_summary (summary), confirmation_summary_presented and
// confirmation_obtained (true), user_confirmation_text (text) and
// idempotency_key (key). args itself is not modified.
func ConfirmedArgs(args map[string]any, summary, key, text string) map[string]any {
	out := make(map[string]any, len(args)+5)
	for k, v := range args {
		out[k] = v
	}
	out["confirmed_summary"] = summary
	out["confirmation_summary_presented"] = true
	out["confirmation_obtained"] = true
	out["user_confirmation_text"] = text
	out["idempotency_key"] = key
	return out
}

// ToolCallRequest builds the POST of one JSON-RPC tools/call (id 1) to an
// MCP endpoint, as a stateless client sends it: JSON body, Accept for JSON
// and event streams, MCP-Protocol-Version 2025-06-18, and a bearer token
// when token is not "".
func ToolCallRequest(ctx context.Context, endpoint, token, tool string, args any) (*http.Request, error) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", tool, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}
