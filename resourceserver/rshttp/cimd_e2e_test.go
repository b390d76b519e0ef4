package rshttp_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cimd"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

// urlClient publishes a client ID metadata document at path on host (a
// public client whose one redirect is on loopback, so any port matches)
// and registers its URL as an administrator does with
// `authserver clients register-url URL`. It returns the URL.
func (sys *system) urlClient(host *testkit.DocHost, path, name string) string {
	sys.t.Helper()
	u := host.Base + path
	doc, _ := json.Marshal(map[string]any{"client_id": u, "client_name": name, "redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none", "software_id": "linkslot-e2e"})
	host.Put(path, http.StatusOK, string(doc), "Cache-Control", "max-age=600")
	adm, err := admin.New(admin.Config{Store: sys.store, Documents: cimd.NewResolver(nil, cimd.Options{Development: true, RootCAs: host.CA.Pool()})})
	if err != nil {
		sys.t.Fatal(err)
	}
	if _, err := adm.RegisterURLClient(sys.ctx, admin.Actor{ID: "e2e"}, admin.URLClientSpec{URL: u}); err != nil {
		sys.t.Fatalf("register-url %s: %v", u, err)
	}
	return u
}

// advertisesCIMD checks the authorization server's metadata: client ID
// metadata documents supported, and "none" among the token endpoint's
// methods (Claude uses CIMD only then).
func (sys *system) advertisesCIMD() {
	sys.t.Helper()
	resp, err := sys.http.Get(sys.issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		sys.t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		CIMD    bool     `json:"client_id_metadata_document_supported"`
		Methods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		sys.t.Fatal(err)
	}
	if !md.CIMD || !slices.Contains(md.Methods, "none") {
		sys.t.Fatalf("authorization server metadata: client_id_metadata_document_supported %v, token_endpoint_auth_methods_supported %v", md.CIMD, md.Methods)
	}
}

// The MCP Go SDK client links with its client ID metadata document
// configuration (ClientIDMetadataDocumentConfig: its URL is the client_id)
// against both servers over HTTPS under a test CA, the authorization server
// fetching the document from an HTTPS host on loopback; the consent page is
// the URL client's; then tools are called with the token.
func TestGoSDKClientLinksByMetadataDocument(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		host := testkit.NewDocHost(t)
		sys := buildSystem(t, systemOpts{store: s, host: host})
		u := sys.urlClient(host, "/oauth/go-sdk-client.json", "Linkslot Go SDK e2e")
		sys.advertisesCIMD()

		cs := sys.connectWith(&auth.AuthorizationCodeHandlerConfig{
			ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: u},
		})
		v := sys.lastView
		if sys.consents != 1 || !v.URLClient || v.ClientID != u || v.ClientHost != strings.TrimPrefix(host.Base, "https://") ||
			v.ClientName != "Linkslot Go SDK e2e" || !v.AllLoopback || v.Unverified || v.RedirectURL != "http://127.0.0.1:53682/callback" {
			t.Fatalf("consent %d times, view %+v", sys.consents, v)
		}
		tl, err := cs.ListTools(sys.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		requireReadTools(t, tl.Tools)
		found := callOK(t, cs, "search_bookable_business", map[string]any{"query": "haircut", "city": "New York"})
		if rs, _ := found["results"].([]any); len(rs) == 0 {
			t.Fatalf("no barbers found: %v", found)
		}
		if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, u); err != nil {
			t.Fatalf("no link for the URL client: %v", err)
		}
		// Fetched once when registered and once by the authorization
		// server, which then answers the token request from its cache.
		if n := host.Hits("/oauth/go-sdk-client.json"); n != 2 {
			t.Fatalf("document fetched %d times, want 2 (registration, authorization)", n)
		}
	})
}

// TestTypeScriptSDKClientMetadataURL runs the official TypeScript MCP SDK
// client with clientMetadataUrl against both servers over HTTPS (node trusts
// the test CA through NODE_EXTRA_CA_CERTS) with the real sign-in and
// consent pages: the SDK sends the document's URL as client_id because the
// authorization server advertises client_id_metadata_document_supported,
// the server fetches the document from the HTTPS host, and the client calls
// search_bookable_business with its token.
func TestTypeScriptSDKClientMetadataURL(t *testing.T) {
	needNode(t)
	if testing.Short() {
		t.Skip("short mode: skips the Node.js client")
	}
	npmInstall(t)
	host := testkit.NewDocHost(t)
	sys := buildSystem(t, systemOpts{realUI: true, store: sqltest.SQLite(t), host: host})
	u := sys.urlClient(host, "/oauth/ts-sdk-client.json", "Linkslot TypeScript e2e")
	sys.advertisesCIMD()
	ca := host.CA.WritePEM(t, t.TempDir())

	res := runTSClient(t, sys, "LINKSLOT_CLIENT_METADATA_URL="+u, "NODE_EXTRA_CA_CERTS="+ca)
	if res.ClientID != u {
		t.Fatalf("the SDK linked as %q, want %q", res.ClientID, u)
	}
	t.Logf("TypeScript SDK client as %s: scope %q, results %v", res.ClientID, res.Scope, res.Results)
	if _, err := sys.store.GetActiveLink(sys.ctx, sys.account.ID, u); err != nil {
		t.Fatalf("no link for the URL client: %v", err)
	}
	if n := host.Hits("/oauth/ts-sdk-client.json"); n != 2 {
		t.Fatalf("document fetched %d times, want 2 (registration, authorization)", n)
	}
}
