package tools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/mutation"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// freeText are the arguments written by or for a person; they may carry
// tabs and line breaks. Every other string argument is a reference, a
// date, a code or a search term, and may carry no control character.
var freeText = map[string]bool{
	"notes":                            true,
	"reason":                           true,
	mutation.FieldUserConfirmationText: true,
	mutation.FieldConfirmedSummary:     true,
}

// controlChars refuses, for every tool, string arguments carrying C0
// control characters (U+0000–U+001F, internal/textcheck): NUL in
// particular, which PostgreSQL cannot store in text (SQLSTATE 22021) while
// SQLite can. Tab, CR and LF are allowed in free text only. It is the one
// validator for all tools; the tools' own checks run after it.
func controlChars(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || len(call.Params.Arguments) == 0 {
			return next(ctx, method, req)
		}
		var args map[string]any
		if json.Unmarshal(call.Params.Arguments, &args) != nil {
			return next(ctx, method, req) // the SDK's schema check answers
		}
		if te := checkControlChars(args); te != nil {
			return failedResult(te), nil
		}
		return next(ctx, method, req)
	}
}

// checkControlChars returns the invalid_argument error for the first
// argument (in name order, for stable answers) holding a forbidden control
// character, looking into nested arrays and objects.
func checkControlChars(args map[string]any) *problem.Error {
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if bad, ok := findControl(args[k], freeText[k]); ok {
			what := textcheck.Describe(bad)
			allowed := ""
			if freeText[k] {
				allowed = " (tabs and line breaks are fine)"
			}
			return invalidArg(k, "%s contains %s, which Linkslot does not accept; remove it and retry%s.", k, what, allowed)
		}
		// A control character in an argument name is refused as well.
		if bad, ok := findControl(k, false); ok {
			return invalidArg("", "An argument name contains the control character U+%04X; see the tool's input schema.", bad)
		}
	}
	return nil
}

func findControl(v any, free bool) (rune, bool) {
	switch x := v.(type) {
	case string:
		return textcheck.Control(x, free)
	case []any:
		for _, e := range x {
			if r, ok := findControl(e, free); ok {
				return r, true
			}
		}
	case map[string]any:
		for k, e := range x {
			if r, ok := textcheck.Control(k, false); ok {
				return r, true
			}
			if r, ok := findControl(e, free); ok {
				return r, true
			}
		}
	}
	return 0, false
}
