package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/authserver/internal/fositestore"
	"github.com/linkslot/linkslot/authserver/internal/provider"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func TestProvider(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	secret := []byte("0123456789abcdef0123456789abcdef")
	km := keys.NewManager(s, secret, store.KeyPurposeToken, nil)
	if err := km.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := provider.New(fositestore.New(s, fositestore.Options{}), km,
		provider.Config{Issuer: "https://as.example", Secret: secret, RefreshIdle: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Config
	checks := []struct {
		name string
		ok   bool
	}{
		{"PKCE enforced for every client", c.EnforcePKCE},
		{"plain PKCE refused", !c.EnablePKCEPlainChallengeMethod},
		{"access tokens 15 min", c.AccessTokenLifespan == 15*time.Minute},
		{"codes 60 s", c.AuthorizeCodeLifespan == 60*time.Second},
		{"refresh idle configurable", c.RefreshTokenLifespan == 48*time.Hour},
		{"refresh without offline_access", c.RefreshTokenScopes != nil && len(c.RefreshTokenScopes) == 0},
		{"scope as a string", c.JWTScopeClaimKey == jwt.JWTScopeFieldString},
		{"issuer", c.AccessTokenIssuer == "https://as.example" && c.IDTokenIssuer == "https://as.example"},
		{"no debug to clients", !c.SendDebugMessagesToClients},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: not so", ch.name)
		}
	}

	// The signer verifies tokens of the previous key after a rotation.
	tok, _, err := p.Signer.Generate(ctx, jwt.MapClaims{"sub": "a", "exp": time.Now().Add(time.Minute).Unix()}, &jwt.Headers{Extra: map[string]any{"typ": "at+jwt"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := km.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Signer.Validate(ctx, tok); err != nil {
		t.Fatalf("token of the previous key: %v", err)
	}
	if _, err := p.Signer.Validate(ctx, tok[:len(tok)-4]+"AAAA"); err == nil {
		t.Fatal("tampered token validated")
	}
}
