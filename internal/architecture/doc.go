// Package architecture holds, as tests, the import lines of the layout in
// docs/design.md: domain packages (the booking engine, identity, the mutation
// protocol and its pieces, scopes, the store interfaces, the domain error
// type) import neither gorm, fosite, Echo, the MCP SDK nor net/http; the
// resource server never imports the authorization server; the MCP tools
// reach grants, confirmations and idempotency keys only through the
// mutation service.
// The tests ask `go list -deps`, so they see exactly what the build sees.
// TestGofmt holds one more line: every Go file is as gofmt writes it.
package architecture
