// Package testkit is test and load-driver support: a settable Clock, MCP
// answer helpers and linking an agent through the real sign-in and consent
// pages. It is
// imported only by tests, bench and test harnesses, never by the servers.
//
// The MCP helpers work on decoded structuredContent (any JSON value):
// FindString digs a string out of an answer, ConfirmedArgs completes a
// mutation's arguments with the confirmation protocol's five fields
// (docs/reference.md §5), and ToolCallRequest builds a raw JSON-RPC tools/call POST
// for drivers that classify the HTTP answer themselves.
//
// LinkThroughPages drives the OAuth authorization code flow (PKCE S256,
// golang.org/x/oauth2) the way a person's browser does: open the
// authorization URL, fill in the sign-in form when it is shown, approve the
// consent form when it is shown, catch the redirect to the client with the
// code, and exchange it. Both forms are submitted with their own hidden
// fields (CSRF token included), read by HiddenFields. NewBrowser builds the
// cookie-jar client that stops at the client's redirect URL.
package testkit
