package consentui_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/testkit"
)

// TestConnectedAppsShowToolUse: an app linked through the real pages and
// then calling a tool on the resource server is shown on Connected apps as
// used, not "Not used yet" (docs/reference.md §15).
func TestConnectedAppsShowToolUse(t *testing.T) {
	sy := newSystem(t)
	bg := context.Background()
	const email, pw = "lea@example.com", "Link-Use-Canary-Passphrase-7"
	hash, _ := cheapHasher{}.Hash(bg, pw)
	now := store.SystemClock()
	must(t, sy.store.CreateAccount(bg, store.Account{ID: store.NewID("acct"), Email: email, PasswordHash: hash,
		CreatedAt: now, UpdatedAt: now, EmailVerifiedAt: &now}), "account")
	conf := &oauth2.Config{ClientID: "demo-mcp-client", RedirectURL: "http://127.0.0.1:1/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: sy.url + "/oauth2/authorize", TokenURL: sy.url + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
	browser := testkit.NewBrowser(conf.RedirectURL, nil, 10*time.Second)
	tok, err := testkit.LinkThroughPages(bg, testkit.LinkRequest{OAuth: conf, Browser: browser, Email: email, Password: pw})
	must(t, err, "link through the pages")

	connections := func() string {
		t.Helper()
		res, err := browser.Get(sy.url + "/account/connections")
		must(t, err, "connections page")
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("connections page: %d", res.StatusCode)
		}
		return string(b)
	}
	if page := connections(); !strings.Contains(page, "Not used yet") {
		t.Fatalf("a link not used by a tool yet does not say so:\n%s", page)
	}

	time.Sleep(10 * time.Millisecond) // the use is later than the link, as the page compares them
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-test", Version: "1"}, nil)
	cs, err := c.Connect(bg, &mcp.StreamableClientTransport{Endpoint: sy.rsURL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: conf.Client(bg, tok)}, nil)
	must(t, err, "connect the MCP client")
	defer cs.Close()
	res, err := cs.CallTool(bg, &mcp.CallToolParams{Name: "search_bookable_business", Arguments: map[string]any{"query": "cut"}})
	if err != nil || res.IsError {
		t.Fatalf("tool call: %v %+v", err, res)
	}
	page := connections()
	if !strings.Contains(page, "Last used") || strings.Contains(page, "Not used yet") {
		t.Errorf("after a tool call the connections page does not show the use:\n%s", page)
	}
}
