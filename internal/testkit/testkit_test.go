package testkit_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/linkslot/linkslot/internal/testkit"
)

func TestFindString(t *testing.T) {
	v := map[string]any{"status": "ok", "booking": map[string]any{"booking_reference": "LS-1"},
		"list": []any{map[string]any{"grant": "g-1"}}, "n": 3.0}
	for _, tc := range []struct{ key, want string }{
		{"status", "ok"}, {"booking_reference", "LS-1"}, {"grant", "g-1"}, {"n", ""}, {"missing", ""},
	} {
		if got := testkit.FindString(v, tc.key); got != tc.want {
			t.Errorf("FindString(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
	if got := testkit.FindString(nil, "x"); got != "" {
		t.Errorf("FindString(nil) = %q", got)
	}
}

func TestConfirmedArgs(t *testing.T) {
	args := map[string]any{"booking_reference": "LS-1"}
	got := testkit.ConfirmedArgs(args, "the summary", "key-0123456789", "Yes.")
	want := map[string]any{"booking_reference": "LS-1", "confirmed_summary": "the summary", "confirmation_summary_presented": true,
		"confirmation_obtained": true, "user_confirmation_text": "Yes.", "idempotency_key": "key-0123456789"}
	if len(got) != len(want) {
		t.Fatalf("got %d fields, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(args) != 1 {
		t.Errorf("args modified: %v", args)
	}
}

func TestHiddenFields(t *testing.T) {
	body := `<form><input type="hidden" name="csrf_token" value="a&#43;b">` +
		`<input type="hidden" name="scope" value="openid">` + `<input type="hidden" name="scope" value="x&amp;y">` +
		`<input type="text" name="email" value="no"></form>`
	v := testkit.HiddenFields(body)
	if v.Get("csrf_token") != "a+b" || len(v["scope"]) != 2 || v["scope"][1] != "x&y" || v.Has("email") {
		t.Errorf("HiddenFields = %v", v)
	}
}

func TestToolCallRequest(t *testing.T) {
	for _, tc := range []struct{ token, auth string }{{"tok", "Bearer tok"}, {"", ""}} {
		req, err := testkit.ToolCallRequest(context.Background(), "http://127.0.0.1:1/mcp", tc.token, "get_my_booking",
			map[string]any{"booking_reference": "LS-1"})
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != "POST" || req.URL.String() != "http://127.0.0.1:1/mcp" || req.Header.Get("Authorization") != tc.auth ||
			req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
			t.Errorf("request = %s %s %v", req.Method, req.URL, req.Header)
		}
		b, _ := io.ReadAll(req.Body)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil || m.Method != "tools/call" || m.Params.Name != "get_my_booking" ||
			m.Params.Arguments["booking_reference"] != "LS-1" {
			t.Errorf("body = %s", b)
		}
	}
	if _, err := testkit.ToolCallRequest(context.Background(), "http://x/mcp", "", "t", map[string]any{"bad": func() {}}); err == nil {
		t.Error("unmarshalable arguments accepted")
	}
}
