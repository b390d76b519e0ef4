package cimd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	jose "github.com/go-jose/go-jose/v3"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/loopback"
	"github.com/linkslot/linkslot/internal/safefetch"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Authentication methods a document may name.
const (
	AuthNone          = "none"
	AuthPrivateKeyJWT = "private_key_jwt"
)

// SigningAlgs are the client assertion algorithms accepted (docs/reference.md §10).
var SigningAlgs = []string{"ES256", "RS256"}

// IsURL reports whether clientID is a URL rather than a registered id
// (registered ids cannot contain a colon).
func IsURL(clientID string) bool { return strings.Contains(clientID, "://") }

// Document is what Linkslot reads of a client ID metadata document.
type Document struct {
	ClientID                string          `json:"client_id"`
	ClientName              string          `json:"client_name"`
	ClientURI               string          `json:"client_uri,omitempty"`
	LogoURI                 string          `json:"logo_uri,omitempty"`
	RedirectURIs            []string        `json:"redirect_uris"`
	TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method,omitempty"`
	SigningAlg              string          `json:"token_endpoint_auth_signing_alg,omitempty"`
	JWKSURI                 string          `json:"jwks_uri,omitempty"`
	JWKS                    json.RawMessage `json:"jwks,omitempty"`
	// IDTokenSignedResponseAlg chooses the client's ID token algorithm:
	// ES256 or RS256; absent, the server's default (docs/reference.md §14).
	IDTokenSignedResponseAlg string `json:"id_token_signed_response_alg,omitempty"`

	// Keys is the parsed jwks, when the document carries one.
	Keys *jose.JSONWebKeySet `json:"-"`
}

// AuthMethod is the document's authentication method, none by default.
func (d *Document) AuthMethod() string {
	if d.TokenEndpointAuthMethod == "" {
		return AuthNone
	}
	return d.TokenEndpointAuthMethod
}

// Host is the host (with port, if any) of the document's URL: what the
// consent page shows in bold.
func (d *Document) Host() string {
	u, err := url.Parse(d.ClientID)
	if err != nil {
		return ""
	}
	return u.Host
}

// Invalid is a document (or URL) that breaks a rule; Rule completes "The
// app's description is not valid: …".
type Invalid struct{ Rule string }

func (e *Invalid) Error() string { return "cimd: invalid client metadata document: " + e.Rule }

func invalid(format string, a ...any) error { return &Invalid{Rule: fmt.Sprintf(format, a...)} }

// CheckURL applies the URL rules to a client ID.
func CheckURL(raw string, development bool) error {
	u, err := safefetch.CheckURL(raw, development)
	if err != nil {
		if u == nil {
			if p, perr := url.Parse(raw); perr == nil && p.Scheme == "http" {
				return invalid("its address must start with https://")
			}
		}
		return invalid("its address is not an https URL Linkslot may fetch")
	}
	if u.Scheme == "https" && loopback.Host(u.Hostname()) && !development {
		return invalid("its address is on this computer, which only development servers accept")
	}
	if strings.Contains(raw, "#") {
		return invalid("its address must not have a fragment (#…)")
	}
	if u.Path == "" || u.Path == "/" {
		return invalid("its address must have a path, such as /client.json")
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") {
			return invalid("its address must not have . or .. path segments")
		}
	}
	return nil
}

// Parse validates the document body fetched (or pinned) for clientURL.
func Parse(clientURL string, body []byte, development bool) (*Document, error) {
	if err := CheckURL(clientURL, development); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, invalid("it is not a JSON object")
	}
	var d Document
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, invalid("a field has the wrong type (%s)", fieldOf(err))
	}
	if d.ClientID == "" {
		return nil, invalid("it has no client_id")
	}
	if d.ClientID != clientURL {
		return nil, invalid("its client_id is not exactly the address it was fetched from")
	}
	d.ClientName = strings.TrimSpace(d.ClientName)
	if d.ClientName == "" {
		return nil, invalid("it has no client_name")
	}
	if len(d.ClientName) > 200 {
		return nil, invalid("its client_name is longer than 200 characters")
	}
	if _, bad := textcheck.Control(d.ClientName, false); bad {
		return nil, invalid("its client_name holds control characters")
	}
	if len(d.RedirectURIs) == 0 {
		return nil, invalid("it lists no redirect_uris")
	}
	for _, r := range d.RedirectURIs {
		if err := clients.ValidateRedirectURI(r); err != nil {
			return nil, invalid("one of its redirect_uris is not allowed (%v)", err)
		}
	}
	if err := clients.CheckIDTokenAlg(d.IDTokenSignedResponseAlg); err != nil {
		return nil, invalid("its id_token_signed_response_alg is not ES256 or RS256, the ID token algorithms this server signs with")
	}
	if _, ok := raw["client_secret"]; ok {
		return nil, invalid("it carries a client_secret, which a public document must not")
	}
	if _, ok := raw["client_secret_expires_at"]; ok {
		return nil, invalid("it carries client_secret_expires_at, which a public document must not")
	}
	switch d.AuthMethod() {
	case AuthNone:
	case AuthPrivateKeyJWT:
		if d.JWKSURI == "" && len(d.JWKS) == 0 {
			return nil, invalid("it asks for private_key_jwt but gives neither jwks_uri nor jwks")
		}
		if d.JWKSURI != "" && len(d.JWKS) != 0 {
			return nil, invalid("it gives both jwks_uri and jwks; only one is allowed")
		}
		if d.JWKSURI != "" {
			if _, err := safefetch.CheckURL(d.JWKSURI, development); err != nil {
				return nil, invalid("its jwks_uri is not an https URL")
			}
		}
		if len(d.JWKS) != 0 {
			var set jose.JSONWebKeySet
			if err := json.Unmarshal(d.JWKS, &set); err != nil || len(set.Keys) == 0 {
				return nil, invalid("its jwks is not a valid key set")
			}
			for i, k := range set.Keys {
				if !k.IsPublic() {
					return nil, invalid("its jwks holds a private key")
				}
				if k.Use == "" { // use is optional (RFC 7517 §4.2); fosite looks at use=sig keys only
					set.Keys[i].Use = "sig"
				}
			}
			d.Keys = &set
		}
		if d.SigningAlg != "" && d.SigningAlg != "ES256" && d.SigningAlg != "RS256" {
			return nil, invalid("its token_endpoint_auth_signing_alg %q is not ES256 or RS256", d.SigningAlg)
		}
	case "client_secret_basic", "client_secret_post", "client_secret_jwt":
		return nil, invalid("it asks for a shared secret (%s), which metadata documents cannot use", d.AuthMethod())
	default:
		return nil, invalid("its token_endpoint_auth_method %q is not none or private_key_jwt", d.AuthMethod())
	}
	return &d, nil
}

func fieldOf(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return te.Field
	}
	return "unreadable value"
}

// Canonical re-encodes a pinned document compactly, after checking it.
func Canonical(body []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return "", invalid("it is not JSON")
	}
	return buf.String(), nil
}
