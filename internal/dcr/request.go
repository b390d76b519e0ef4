package dcr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkslot/linkslot/internal/clients"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Limits of a registration request.
const (
	// MaxBodyBytes bounds the JSON body of a registration request.
	MaxBodyBytes = 16 << 10
	// MaxNameLength bounds client_name, in characters.
	MaxNameLength = 200
	// MaxRedirectURIs bounds redirect_uris; MaxURILength each URI.
	MaxRedirectURIs = 20
	MaxURILength    = 2000
	// MaxContacts bounds contacts; MaxFieldLength each short string field.
	MaxContacts    = 10
	MaxFieldLength = 320
	// UnusedLifetime is how long a registration nobody has linked is kept.
	UnusedLifetime = 24 * time.Hour
)

// Token endpoint authentication methods a registration may ask for.
const (
	AuthNone     = "none"
	AuthBasic    = "client_secret_basic"
	AuthPost     = "client_secret_post"
	ResponseCode = "code"
)

// DefaultName names a client whose registration gives no client_name.
const DefaultName = "Unnamed app"

// RFC 7591 §3.2.2 error codes.
const (
	CodeInvalidRedirectURI    = "invalid_redirect_uri"
	CodeInvalidClientMetadata = "invalid_client_metadata"
)

// Error is a refused registration request: the RFC 7591 error code and a
// description that names the field and what is allowed.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func metadataError(f string, a ...any) *Error {
	return &Error{Code: CodeInvalidClientMetadata, Description: fmt.Sprintf(f, a...)}
}

// Metadata is the client metadata (RFC 7591 §2) Linkslot keeps and
// answers: what was asked, as accepted — defaults filled in and the scope
// cut to the policy's.
type Metadata struct {
	RedirectURIs             []string `json:"redirect_uris"`
	TokenEndpointAuthMethod  string   `json:"token_endpoint_auth_method"`
	GrantTypes               []string `json:"grant_types"`
	ResponseTypes            []string `json:"response_types"`
	ClientName               string   `json:"client_name"`
	Scope                    string   `json:"scope"`
	ClientURI                string   `json:"client_uri,omitempty"`
	LogoURI                  string   `json:"logo_uri,omitempty"`
	TOSURI                   string   `json:"tos_uri,omitempty"`
	PolicyURI                string   `json:"policy_uri,omitempty"`
	Contacts                 []string `json:"contacts,omitempty"`
	SoftwareID               string   `json:"software_id,omitempty"`
	SoftwareVersion          string   `json:"software_version,omitempty"`
	ApplicationType          string   `json:"application_type,omitempty"`
	IDTokenSignedResponseAlg string   `json:"id_token_signed_response_alg,omitempty"`
}

// Public reports whether the client authenticates with no secret.
func (m Metadata) Public() bool { return m.TokenEndpointAuthMethod == AuthNone }

// Parse reads a registration request and returns its metadata as
// accepted, the scope cut to policyScopes (CutScopes). A refusal is an
// *Error.
func Parse(body []byte, policyScopes []string) (Metadata, error) {
	if len(body) > MaxBodyBytes {
		return Metadata{}, metadataError("the registration request is larger than %d bytes", MaxBodyBytes)
	}
	var m Metadata
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Metadata{}, metadataError("the registration request must be a JSON object of client metadata (RFC 7591 §2)")
	}
	dec = json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Metadata{}, metadataError("%s must be %s", te.Field, expected(te.Field))
		}
		return Metadata{}, metadataError("the registration request is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Metadata{}, metadataError("the registration request must hold one JSON object and nothing after it")
	}
	if err := m.check(); err != nil {
		return Metadata{}, err
	}
	m.Scope = scope.Join(CutScopes(scope.Parse(m.Scope), policyScopes))
	return m, nil
}

// expected names the JSON type of a metadata field, for a type error.
func expected(field string) string {
	switch field {
	case "redirect_uris", "grant_types", "response_types", "contacts":
		return "an array of strings"
	}
	return "a string"
}

// check validates every field and fills in the defaults.
func (m *Metadata) check() error {
	if len(m.RedirectURIs) == 0 {
		return &Error{Code: CodeInvalidRedirectURI, Description: "redirect_uris is required: list at least one redirect URI " +
			"(https, http on a loopback host such as http://127.0.0.1/callback, or an app's own scheme in reverse-DNS form)"}
	}
	if len(m.RedirectURIs) > MaxRedirectURIs {
		return &Error{Code: CodeInvalidRedirectURI, Description: fmt.Sprintf("redirect_uris lists %d URIs; at most %d are allowed", len(m.RedirectURIs), MaxRedirectURIs)}
	}
	for i, r := range m.RedirectURIs {
		if len(r) > MaxURILength {
			return &Error{Code: CodeInvalidRedirectURI, Description: fmt.Sprintf("redirect_uris[%d] is longer than %d characters", i, MaxURILength)}
		}
		if !utf8.ValidString(r) {
			return &Error{Code: CodeInvalidRedirectURI, Description: fmt.Sprintf("redirect_uris[%d] is not valid UTF-8", i)}
		}
		if err := clients.ValidateRedirectURI(r); err != nil {
			return &Error{Code: CodeInvalidRedirectURI, Description: fmt.Sprintf("redirect_uris[%d]: %v", i, err)}
		}
	}
	m.RedirectURIs = dedupe(m.RedirectURIs)

	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = AuthNone
	case AuthNone, AuthBasic, AuthPost:
	default:
		return metadataError("token_endpoint_auth_method %q is not supported: use none (a public client, the default), %s or %s",
			clip(m.TokenEndpointAuthMethod), AuthBasic, AuthPost)
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{clients.GrantAuthorizationCode, clients.GrantRefreshToken}
	}
	for _, g := range m.GrantTypes {
		if g != clients.GrantAuthorizationCode && g != clients.GrantRefreshToken {
			return metadataError("grant_types: %q is not supported; only authorization_code and refresh_token are", clip(g))
		}
	}
	m.GrantTypes = dedupe(m.GrantTypes)
	if !slices.Contains(m.GrantTypes, clients.GrantAuthorizationCode) {
		return metadataError("grant_types must include authorization_code")
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{ResponseCode}
	}
	for _, r := range m.ResponseTypes {
		if r != ResponseCode {
			return metadataError("response_types: %q is not supported; only code is", clip(r))
		}
	}
	m.ResponseTypes = dedupe(m.ResponseTypes)

	m.ClientName = clients.NormalizeName(m.ClientName)
	if n := utf8.RuneCountInString(m.ClientName); n > MaxNameLength {
		return metadataError("client_name has %d characters; at most %d are allowed", n, MaxNameLength)
	}
	if m.ClientName == "" {
		m.ClientName = DefaultName
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"client_uri", &m.ClientURI}, {"logo_uri", &m.LogoURI}, {"tos_uri", &m.TOSURI}, {"policy_uri", &m.PolicyURI}} {
		*f.v = strings.TrimSpace(*f.v)
		if *f.v == "" {
			continue
		}
		if u, err := url.Parse(*f.v); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(*f.v) > MaxURILength {
			return metadataError("%s must be an https URL of at most %d characters", f.name, MaxURILength)
		}
	}
	if len(m.Contacts) > MaxContacts {
		return metadataError("contacts lists %d entries; at most %d are allowed", len(m.Contacts), MaxContacts)
	}
	for i, c := range m.Contacts {
		if len(c) > MaxFieldLength {
			return metadataError("contacts[%d] is longer than %d characters", i, MaxFieldLength)
		}
	}
	for _, f := range []struct{ name, v string }{{"client_name", m.ClientName}, {"software_id", m.SoftwareID},
		{"software_version", m.SoftwareVersion}, {"scope", m.Scope}, {"contacts", strings.Join(m.Contacts, " ")}} {
		if _, bad := textcheck.Control(f.v, false); bad || !utf8.ValidString(f.v) {
			return metadataError("%s must be text without control characters", f.name)
		}
	}
	for _, f := range []struct{ name, v string }{{"software_id", m.SoftwareID}, {"software_version", m.SoftwareVersion}} {
		if len(f.v) > MaxFieldLength {
			return metadataError("%s is longer than %d characters", f.name, MaxFieldLength)
		}
	}
	if len(m.Scope) > MaxFieldLength*4 {
		return metadataError("scope is longer than %d characters", MaxFieldLength*4)
	}
	switch m.ApplicationType {
	case "", "web", "native":
	default:
		return metadataError("application_type %q is not one of web and native", clip(m.ApplicationType))
	}
	if clients.CheckIDTokenAlg(m.IDTokenSignedResponseAlg) != nil {
		return metadataError("id_token_signed_response_alg %q is not supported: use %s or %s", clip(m.IDTokenSignedResponseAlg), clients.IDTokenES256, clients.IDTokenRS256)
	}
	return nil
}

// CutScopes is what a registration that asked for requested may be
// granted under a policy that allows policy (LINKSLOT_DCR_SCOPES):
//
//   - nothing asked: every scope of the policy;
//   - otherwise the asked scopes the policy allows, plus openid (what the
//     resource server's challenge names, so every MCP client's authorization
//     request carries it) when the policy allows it;
//   - and when the asked scopes name no private scope the policy allows —
//     an MCP client registers with what the resource's metadata advertises,
//     openid — every private scope of the policy too, so the client can
//     reach the tools.
//
// Unknown scopes are dropped. The result is in vocabulary order.
func CutScopes(requested, policy []string) []string {
	set := map[string]bool{}
	if len(requested) == 0 {
		for _, s := range policy {
			set[s] = true
		}
		return scope.Ordered(set)
	}
	private := false
	for _, s := range requested {
		if slices.Contains(policy, s) && scope.Known(s) {
			set[s] = true
			if sc, _ := scope.Lookup(s); !sc.Public {
				private = true
			}
		}
	}
	for _, s := range policy {
		sc, ok := scope.Lookup(s)
		if s == scope.OpenID || ok && !sc.Public && !private {
			set[s] = true
		}
	}
	return scope.Ordered(set)
}

// DefaultScopes are the private scopes of allowed: what an authorization
// request for openid alone is granted (docs/reference.md §2).
func DefaultScopes(allowed []string) []string {
	var out []string
	for _, s := range allowed {
		if sc, ok := scope.Lookup(s); ok && !sc.Public {
			out = append(out, s)
		}
	}
	return out
}

func dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// clip bounds a client-supplied value quoted in a description.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}
