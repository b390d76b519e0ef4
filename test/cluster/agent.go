package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/testkit"
)

// Agent is one linked MCP client acting for one person: a browser (cookie
// jar) signed in at the authorization servers, and its OAuth tokens.
type Agent struct {
	Email   string
	Browser *http.Client
	Token   *oauth2.Token
	OAuth   *oauth2.Config
	HTTP    *http.Client // API calls (no cookies)
}

// transport keeps many agents from exhausting loopback ports.
var transport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	MaxIdleConns:        1000,
	MaxIdleConnsPerHost: 200,
	IdleConnTimeout:     30 * time.Second,
}

// oauthFor is the demo client's OAuth configuration at one authorization
// server replica.
func oauthFor(as *Proc) *oauth2.Config {
	return &oauth2.Config{ClientID: demo.ClientID, RedirectURL: "http://127.0.0.1:41234/callback", Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: as.Base + "/oauth2/authorize", TokenURL: as.Base + "/oauth2/token",
			AuthStyle: oauth2.AuthStyleInParams}}
}

func readAll(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return string(b)
}

// Link runs the whole authorization for email at the replica as: authorize
// (PKCE S256) → sign-in form → consent form → code → token.
func Link(ctx context.Context, as *Proc, email, password string) (*Agent, error) {
	a := &Agent{Email: email, OAuth: oauthFor(as), HTTP: &http.Client{Transport: transport, Timeout: 30 * time.Second}}
	a.Browser = testkit.NewBrowser(a.OAuth.RedirectURL, transport, 30*time.Second)
	tok, err := testkit.LinkThroughPages(ctx, testkit.LinkRequest{OAuth: a.OAuth, Browser: a.Browser, HTTP: a.HTTP,
		Email: email, Password: password, State: "state-" + randHex(8)})
	if err != nil {
		return nil, err
	}
	a.Token = tok
	return a, nil
}

// Refresh rotates the agent's refresh token at one replica.
func (a *Agent) Refresh(ctx context.Context, as *Proc, refresh string) (*oauth2.Token, int, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {demo.ClientID}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, as.Base+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return nil, 0, err
	}
	body := readAll(resp)
	if resp.StatusCode != 200 {
		return nil, resp.StatusCode, fmt.Errorf("refresh: %d %s", resp.StatusCode, body)
	}
	var t struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal([]byte(body), &t); err != nil {
		return nil, resp.StatusCode, err
	}
	return &oauth2.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken}, 200, nil
}

// Disconnect revokes the agent's link through the Connected apps page of
// one authorization server replica (the browser is still signed in there
// or, cookies being per host name, at any replica).
func (a *Agent) Disconnect(ctx context.Context, as *Proc) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.Base+"/account/connections", nil)
	resp, err := a.Browser.Do(req)
	if err != nil {
		return err
	}
	body := readAll(resp)
	i := strings.Index(body, "/account/connections/disconnect")
	if i < 0 {
		return fmt.Errorf("no disconnect form on the connections page (%d)", resp.StatusCode)
	}
	end := strings.Index(body[i:], "</form>")
	if end < 0 {
		end = len(body) - i
	}
	form := testkit.HiddenFields(body[i : i+end])
	if form.Get("link_id") == "" {
		return errors.New("disconnect form without link_id")
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, as.Base+"/account/connections/disconnect", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = a.Browser.Do(req)
	if err != nil {
		return err
	}
	readAll(resp)
	if resp.StatusCode != 200 || !strings.Contains(resp.Request.URL.RawQuery, "disconnected=1") {
		return fmt.Errorf("disconnect answered %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return nil
}

// Answer is one classified tool-call answer.
type Answer struct {
	Kind       string         // "ok", a documented error code, "http_<status>", or "transport"
	Status     int            // HTTP status
	Result     map[string]any // structuredContent
	RetryAfter int            // retry_after_sec of an error
	Elapsed    time.Duration
}

// Call posts one tools/call JSON-RPC request to rs with the agent's access
// token and classifies the answer.
func Call(ctx context.Context, hc *http.Client, rs *Proc, token, tool string, args any) Answer {
	start := time.Now()
	req, err := testkit.ToolCallRequest(ctx, rs.Base+"/mcp", token, tool, args)
	if err != nil {
		return Answer{Kind: "transport", Elapsed: time.Since(start)}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{Kind: "transport", Elapsed: time.Since(start)}
	}
	body := readAll(resp)
	ans := Answer{Status: resp.StatusCode, Elapsed: time.Since(start)}
	if resp.StatusCode != 200 {
		ans.Kind = fmt.Sprintf("http_%d", resp.StatusCode)
		var e struct {
			RetryAfter int `json:"retry_after_sec"`
		}
		json.Unmarshal([]byte(body), &e)
		ans.RetryAfter = e.RetryAfter
		return ans
	}
	var rpc struct {
		Result *struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &rpc); err != nil || (rpc.Result == nil && rpc.Error == nil) {
		ans.Kind = "malformed"
		return ans
	}
	if rpc.Error != nil {
		ans.Kind = fmt.Sprintf("jsonrpc_%d", rpc.Error.Code)
		return ans
	}
	ans.Result = rpc.Result.StructuredContent
	if !rpc.Result.IsError {
		ans.Kind = "ok"
		if st, _ := ans.Result["status"].(string); st != "" && st != "confirmed" && st != "cancelled" && st != "rescheduled" {
			ans.Kind = st // confirmation_required, summary_changed …
		}
		return ans
	}
	e, _ := ans.Result["error"].(map[string]any)
	ans.Kind, _ = e["code"].(string)
	if ans.Kind == "" {
		ans.Kind = "error_without_code"
	}
	if n, ok := e["retry_after_sec"].(float64); ok {
		ans.RetryAfter = int(n)
	}
	return ans
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// Session connects the MCP Go SDK client to rs with the agent's token.
func (a *Agent) Session(ctx context.Context, rs *Proc, resource string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "linkslot-cluster", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: rs.Base + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{token: a.Token.AccessToken, base: transport}, Timeout: 30 * time.Second},
		DisableStandaloneSSE: true, MaxRetries: -1}
	return c.Connect(ctx, tr, nil)
}
