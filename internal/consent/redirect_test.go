package consent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/consent"
)

func TestShownRedirect(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "http://127.0.0.1:6276/oauth/callback", "http://127.0.0.1:6276/oauth/callback"},
		{"control characters", "https://a.example/\r\nSet-Cookie:\x00", "https://a.example/\ufffd\ufffdSet-Cookie:\ufffd"},
		{"bidirectional override", "https://a.example/\u202egnp.exe", "https://a.example/\ufffdgnp.exe"},
		{"invalid UTF-8", "https://a.example/\xff", "https://a.example/\ufffd"},
		{"exactly the bound", strings.Repeat("é", consent.MaxShownRedirect), strings.Repeat("é", consent.MaxShownRedirect)},
		{"over the bound", strings.Repeat("é", consent.MaxShownRedirect+1), strings.Repeat("é", consent.MaxShownRedirect) + "…"},
	} {
		got := consent.ShownRedirect(tc.in)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > consent.MaxShownRedirect+1 {
			t.Errorf("%s: %d characters shown", tc.name, n)
		}
	}
}

// TestRedirectRefusalMessage: the one-paragraph form a UI without its own
// page shows says the same: the address, the list only when public, the
// any-port rule only when a loopback address is listed.
func TestRedirectRefusalMessage(t *testing.T) {
	public := consent.RedirectRefusal{ClientName: "Demo MCP client", Refused: "http://127.0.0.1:6276/oauth/callback", Public: true,
		Allowed: []consent.AllowedRedirect{{URL: "http://127.0.0.1/callback", AnyPort: true}, {URL: "https://app.example/cb"}}}
	msg := public.Message()
	for _, want := range []string{"Demo MCP client asked Linkslot to send you back to http://127.0.0.1:6276/oauth/callback",
		"It may use: http://127.0.0.1/callback (any port), https://app.example/cb.", consent.LoopbackRule, "send people back to one of these"} {
		if !strings.Contains(msg, want) {
			t.Errorf("public: %q lacks %q", msg, want)
		}
	}
	private := consent.RedirectRefusal{ClientName: "Partner", Refused: "https://x.example/cb", Allowed: public.Allowed}
	msg = private.Message()
	if strings.Contains(msg, "127.0.0.1/callback") || strings.Contains(msg, "any port") || !strings.Contains(msg, "Ask the app's developer to register it") {
		t.Errorf("private: %q", msg)
	}
	noLoopback := consent.RedirectRefusal{Refused: "https://x.example/cb", Public: true, Allowed: []consent.AllowedRedirect{{URL: "https://app.example/cb"}},
		Document: "https://app.example/client.json"}
	msg = noLoopback.Message()
	if strings.Contains(msg, "any port") || !strings.HasPrefix(msg, "The app asked") || !strings.Contains(msg, "description at https://app.example/client.json lists") {
		t.Errorf("document client: %q", msg)
	}
}
