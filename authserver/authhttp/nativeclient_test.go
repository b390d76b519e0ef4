package authhttp_test

import (
	"context"
	"testing"

	"golang.org/x/oauth2"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestRegisteredCursorClient: Cursor registered by an administrator, as
// docs/deployment.md says (`authserver clients create --public --id cursor
// --redirect-uri cursor://anysphere.cursor-mcp/oauth/callback --redirect-uri
// http://localhost/callback …`), links through its private-use scheme
// callback and through a loopback one on a port of its choosing, and gets
// refresh tokens for the offline_access it asks for.
func TestRegisteredCursorClient(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t))
	ctx := context.Background()
	svc, err := admin.New(admin.Config{Store: e.s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateClient(ctx, admin.Actor{ID: admin.ActorCLI}, admin.ClientSpec{ID: "cursor", Name: "Cursor", Public: true,
		RedirectURIs:  []string{"cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost/callback"},
		AllowedScopes: []string{"openid", "offline_access", "bookings:read", "bookings:write"},
		DefaultScopes: []string{"bookings:read", "bookings:write"}}); err != nil {
		t.Fatalf("clients create with a cursor:// redirect: %v", err)
	}
	for _, back := range []string{"cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:8787/callback"} {
		oc := &oauth2.Config{ClientID: "cursor", RedirectURL: back, Scopes: []string{"openid", "offline_access"},
			Endpoint: oauth2.Endpoint{AuthURL: e.issuer + "/oauth2/authorize", TokenURL: e.issuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}
		v := oauth2.GenerateVerifier()
		u := e.authorize(oc.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(v)), e.account.ID, "allow")
		if got := u.Scheme + "://" + u.Host + u.Path; got != back || u.Query().Get("code") == "" {
			t.Fatalf("%s: sent back to %s (code given: %v)", back, got, u.Query().Get("code") != "")
		}
		tok, err := oc.Exchange(ctx, u.Query().Get("code"), oauth2.VerifierOption(v))
		if err != nil {
			t.Fatalf("%s: exchange: %v", back, err)
		}
		if tok.RefreshToken == "" {
			t.Fatalf("%s: no refresh token", back)
		}
	}
}
