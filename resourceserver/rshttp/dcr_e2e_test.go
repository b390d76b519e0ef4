package rshttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
)

// TestEndToEndDynamicRegistration: an MCP client with no registration and
// no metadata document — Cursor's case — registers itself through the
// advertised registration_endpoint (the MCP Go SDK's RFC 7591 client),
// links through authorize and token (golang.org/x/oauth2 inside the SDK),
// and calls the tools.
func TestEndToEndDynamicRegistration(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		sys := buildSystem(t, systemOpts{store: s, dcrPolicy: "open"})
		cs := sys.connectWith(&auth.AuthorizationCodeHandlerConfig{DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{ClientName: "Cursor", RedirectURIs: []string{"http://127.0.0.1:53682/callback"},
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none"}}})
		if v := sys.lastView; sys.consents != 1 || !v.Dynamic || !v.Unverified || !strings.HasPrefix(v.ClientID, "dcr-") ||
			v.ClientName != "Cursor" || v.ClientHost != "127.0.0.1:53682" {
			t.Fatalf("consents %d, last consent view %+v", sys.consents, v)
		}
		found := callOK(t, cs, "search_bookable_business", map[string]any{"query": "haircut", "city": "New York"})
		if rs, _ := found["results"].([]any); len(rs) == 0 {
			t.Fatalf("no barbers found: %v", found)
		}
		callOK(t, cs, "search_my_bookings", map[string]any{"status": "upcoming"})
		links, err := s.ListAccountLinks(context.Background(), sys.account.ID)
		if err != nil || len(links) != 1 || links[0].ClientID != sys.lastView.ClientID || links[0].Status != store.LinkActive {
			t.Fatalf("links %+v, %v", links, err)
		}
		if _, err := s.GetClientRegistration(context.Background(), links[0].ClientID); err != nil {
			t.Fatalf("the linked client has no registration: %v", err)
		}

		// A client that deletes its registration (RFC 7592) loses its
		// access tokens at /mcp within 5 s, and its refresh token.
		regToken, regURI := registerForToken(t, sys)
		cfg := sys.oauthClient()
		cfg.ClientID = strings.TrimPrefix(regURI, sys.issuer+"/oauth2/register/")
		code, verifier := sys.code(cfg)
		tok, err := sys.exchange(cfg, code, verifier)
		if err != nil {
			t.Fatal(err)
		}
		sys.refusedWithin5s(tok.AccessToken, func() {
			req, _ := http.NewRequestWithContext(sys.ctx, http.MethodDelete, regURI, nil)
			req.Header.Set("Authorization", "Bearer "+regToken)
			resp, err := sys.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("delete the registration: %d", resp.StatusCode)
			}
		})
		if _, err := sys.refresh(cfg, tok.RefreshToken); err == nil {
			t.Fatal("the refresh token of a deleted registration still works")
		}
	})
}

// registerForToken registers a client by hand and returns its
// registration access token and registration client URI.
func registerForToken(t *testing.T, sys *system) (token, uri string) {
	t.Helper()
	resp, err := sys.http.Post(sys.issuer+"/oauth2/register", "application/json",
		strings.NewReader(`{"client_name":"Goose","redirect_uris":["http://127.0.0.1/callback"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Token string `json:"registration_access_token"`
		URI   string `json:"registration_client_uri"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	return r.Token, r.URI
}
