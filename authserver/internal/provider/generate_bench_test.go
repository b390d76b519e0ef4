package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/provider"
)

// BenchmarkGenerate: one access token and one ID token, as every refresh
// rotation signs (the signature itself is most of it; the rest is the
// header's and the claims' JSON).
//
//	go test ./authserver/internal/provider -run '^$' -bench Generate -benchmem
func BenchmarkGenerate(b *testing.B) {
	ctx := context.Background()
	p, _ := newProvider(b)
	now := time.Now().Truncate(time.Second)
	access := (&jwt.JWTClaims{Subject: "acct-1", Issuer: "https://as.example", Audience: []string{"https://rs.example/mcp"},
		JTI: "jti-1", IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute), Scope: []string{"openid", "bookings:read", "bookings:write"},
		ScopeField: jwt.JWTScopeFieldString, Extra: map[string]any{"client_id": "demo-mcp-client", "link_id": "link-1"}}).ToMapClaims()
	id := jwt.MapClaims((&jwt.IDTokenClaims{Subject: "acct-1", Issuer: "https://as.example", Audience: []string{"demo-mcp-client"},
		JTI: "jti-2", IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute), AuthTime: now.Add(-time.Hour), RequestedAt: now,
		AccessTokenHash: "77QmUPtjPfzWtF2AnpK9RQ", Extra: map[string]any{"email": "demo@example.com"}}).ToMap())
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Signer.Generate(ctx, access, &jwt.Headers{Extra: map[string]any{"typ": "at+jwt"}}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := p.Signer.Generate(ctx, id, &jwt.Headers{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIDTokenSign: one ID token signed by each algorithm's signer, the
// cost a client choosing RS256 adds to its code exchanges and refreshes
// (docs/id-tokens-and-redirects.md gives the ratio).
//
//	go test ./authserver/internal/provider -run '^$' -bench IDTokenSign -benchmem
func BenchmarkIDTokenSign(b *testing.B) {
	ctx := context.Background()
	p, _ := newProvider(b)
	now := time.Now().Truncate(time.Second)
	id := jwt.MapClaims((&jwt.IDTokenClaims{Subject: "acct-1", Issuer: "https://as.example", Audience: []string{"demo-mcp-client"},
		JTI: "jti-2", IssuedAt: now, ExpiresAt: now.Add(15 * time.Minute), AuthTime: now.Add(-time.Hour), RequestedAt: now,
		AccessTokenHash: "77QmUPtjPfzWtF2AnpK9RQ", Extra: map[string]any{"email": "demo@example.com"}}).ToMap())
	for _, alg := range []string{provider.AlgES256, provider.AlgRS256} {
		b.Run(alg, func(b *testing.B) {
			s := p.IDSigners[alg]
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.Generate(ctx, id, &jwt.Headers{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
