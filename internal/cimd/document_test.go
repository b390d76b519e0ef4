package cimd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/cimd"
)

const u = "https://agent.example/oauth/client.json"

func TestParseAcceptsRealWorldShapes(t *testing.T) {
	for name, body := range map[string]string{
		// VS Code lists device_code; unknown grants and fields are ignored.
		"unknown grants and fields": `{"client_id":"` + u + `","client_name":"Visual Studio Code","redirect_uris":["http://127.0.0.1:33418/","https://vscode.dev/redirect"],
			"grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"application_type":"native","software_statement":"x"}`,
		"private_key_jwt with jwks_uri": `{"client_id":"` + u + `","client_name":"ChatGPT","redirect_uris":["https://chatgpt.com/connector_platform_oauth_redirect"],
			"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://agent.example/jwks.json"}`,
		"private_key_jwt with jwks": `{"client_id":"` + u + `","client_name":"Agent","redirect_uris":["https://agent.example/cb"],
			"token_endpoint_auth_method":"private_key_jwt","token_endpoint_auth_signing_alg":"ES256",
			"jwks":{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k1"}]}}`,
		"RS256 ID tokens": `{"client_id":"` + u + `","client_name":"Relying party","redirect_uris":["https://rp.example/cb"],"id_token_signed_response_alg":"RS256"}`,
	} {
		d, err := cimd.Parse(u, []byte(body), false)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d.Host() != "agent.example" {
			t.Errorf("%s: host %q", name, d.Host())
		}
		if want := map[string]string{"RS256 ID tokens": "RS256"}[name]; d.IDTokenSignedResponseAlg != want {
			t.Errorf("%s: id_token_signed_response_alg %q, want %q", name, d.IDTokenSignedResponseAlg, want)
		}
		if d.Keys != nil && d.Keys.Keys[0].Use != "sig" {
			t.Errorf("%s: key use not defaulted to sig", name)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	ok := `"client_name":"A","redirect_uris":["https://a.example/cb"]`
	for name, c := range map[string]struct{ url, body, want string }{
		"not an object":     {u, `[1]`, "not a JSON object"},
		"client_id missing": {u, `{` + ok + `}`, "no client_id"},
		"client_id differs": {u, `{"client_id":"https://agent.example/oauth/client.json?x",` + ok + `}`, "not exactly"},
		"case differs":      {u, `{"client_id":"https://Agent.example/oauth/client.json",` + ok + `}`, "not exactly"},
		"control character": {u, `{"client_id":"` + u + `","client_name":"A\u0007","redirect_uris":["https://a.example/cb"]}`, "control characters"},
		"long name":         {u, `{"client_id":"` + u + `","client_name":"` + strings.Repeat("a", 201) + `","redirect_uris":["https://a.example/cb"]}`, "longer than 200"},
		"wildcard redirect": {u, `{"client_id":"` + u + `","client_name":"A","redirect_uris":["https://*.example/cb"]}`, "not allowed"},
		"both key forms": {u, `{"client_id":"` + u + `",` + ok + `,"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://a.example/k","jwks":{"keys":[]}}`,
			"both jwks_uri and jwks"},
		"bad alg": {u, `{"client_id":"` + u + `",` + ok + `,"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://a.example/k","token_endpoint_auth_signing_alg":"HS256"}`,
			"not ES256 or RS256"},
		"private jwk": {u, `{"client_id":"` + u + `",` + ok + `,"token_endpoint_auth_method":"private_key_jwt","jwks":{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}}`,
			"private key"},
		"HS256 ID tokens": {u, `{"client_id":"` + u + `",` + ok + `,"id_token_signed_response_alg":"HS256"}`,
			"id_token_signed_response_alg is not ES256 or RS256"},
		"unsigned ID tokens": {u, `{"client_id":"` + u + `",` + ok + `,"id_token_signed_response_alg":"none"}`,
			"id_token_signed_response_alg is not ES256 or RS256"},
		"ID token algorithm not a string": {u, `{"client_id":"` + u + `",` + ok + `,"id_token_signed_response_alg":256}`, "wrong type"},
		"client_secret_jwt":               {u, `{"client_id":"` + u + `",` + ok + `,"token_endpoint_auth_method":"client_secret_jwt"}`, "shared secret"},
		"unknown method":                  {u, `{"client_id":"` + u + `",` + ok + `,"token_endpoint_auth_method":"tls_client_auth"}`, "not none or private_key_jwt"},
		"loopback https in production":    {"https://localhost/c.json", `{}`, "only development servers"},
		"no path":                         {"https://agent.example", `{}`, "must have a path"},
		"slash path":                      {"https://agent.example/", `{}`, "must have a path"},
		"encoded dot segment":             {"https://agent.example/a/%2e%2e/c.json", `{}`, ". or .."},
		"user info":                       {"https://me@agent.example/c.json", `{}`, "not an https URL"},
	} {
		_, err := cimd.Parse(c.url, []byte(c.body), false)
		var inv *cimd.Invalid
		if !errors.As(err, &inv) || !strings.Contains(inv.Rule, c.want) {
			t.Errorf("%s: %v, want a rule saying %q", name, err, c.want)
		}
	}
}

func TestIsURL(t *testing.T) {
	if !cimd.IsURL(u) || cimd.IsURL("demo-mcp-client") {
		t.Fatal("IsURL")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(u, `{"client_id":"`+u+`","client_name":"A","redirect_uris":["https://a.example/cb"]}`)
	f.Add(u, `{"client_id":"`+u+`","client_name":"A","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt","jwks":{"keys":[{"kty":"EC"}]}}`)
	f.Add("http://localhost:8080/c.json", `{"client_id":"http://localhost:8080/c.json"}`)
	f.Add(u, `{"redirect_uris":[1,2]}`)
	f.Fuzz(func(t *testing.T, url, body string) {
		d, err := cimd.Parse(url, []byte(body), true)
		if err == nil && (d.ClientID != url || d.ClientName == "" || len(d.RedirectURIs) == 0) {
			t.Fatalf("accepted an incomplete document: %+v", d)
		}
		if err != nil && strings.Contains(err.Error(), body) && len(body) > 8 {
			t.Fatalf("error repeats the body: %v", err)
		}
	})
}
