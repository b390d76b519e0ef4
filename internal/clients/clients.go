package clients

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/linkslot/linkslot/internal/loopback"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Grant types a client may be registered for.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// ID token signing algorithms a client may choose
// (id_token_signed_response_alg, docs/reference.md §14).
const (
	IDTokenES256 = "ES256"
	IDTokenRS256 = "RS256"
)

// CheckIDTokenAlg accepts an id_token_signed_response_alg: ES256, RS256, or
// "" for the server's default (LINKSLOT_ID_TOKEN_ALG). Every way a client
// comes to be (the admin CLI, API and pages, metadata documents, dynamic
// registration) checks it here.
func CheckIDTokenAlg(alg string) error {
	switch alg {
	case "", IDTokenES256, IDTokenRS256:
		return nil
	}
	return fmt.Errorf("id_token_signed_response_alg %q is not supported (ES256 or RS256)", alg)
}

// Problem is one refused part of a registration: the field as its Path
// (as the admin API names it: id, name, redirect_uris, allowed_scopes,
// default_scopes, grant_types, id_token_signed_response_alg; empty for the
// registration as a whole) and what is wrong.
type Problem = problem.Problem

// Validate checks a registration and reports every problem together, each
// with its field (a *problem.Error, invalid_input, with Problems).
func Validate(c store.Client) error {
	var p []Problem
	bad := func(field, f string, a ...any) { p = append(p, Problem{Path: field, Message: fmt.Sprintf(f, a...)}) }
	// A client whose id is the URL of its metadata document (docs/reference.md §10)
	// takes its redirect URIs and authentication from that document.
	urlClient := IsURLID(c.ID)
	if strings.TrimSpace(c.ID) == "" {
		bad("id", "client id is required")
	} else if urlClient && strings.ContainsAny(c.ID, " \t\r\n") {
		bad("id", "client id URL %q must not contain spaces", c.ID)
	} else if !urlClient && strings.ContainsAny(c.ID, " \t\r\n:") {
		bad("id", "client id %q must not contain spaces or colons", c.ID)
	}
	if strings.TrimSpace(c.Name) == "" {
		bad("name", "name is required")
	} else if _, err := textcheck.Text(c.Name, textcheck.NameMax, false); err != nil {
		bad("name", "name %v", err)
	}
	if !c.Public && c.SecretHash == "" && c.JWKSURI == "" && !urlClient {
		bad("", "a confidential client needs a secret or a jwks_uri")
	}
	if c.Public && (c.SecretHash != "" || c.JWKSURI != "") {
		bad("", "a public client has no secret and no jwks_uri")
	}
	if c.SecretHash != "" && c.JWKSURI != "" {
		bad("jwks_uri", "a client authenticates with a secret or with private_key_jwt (jwks_uri), not both")
	}
	if c.JWKSURI != "" {
		if u, err := url.Parse(c.JWKSURI); err != nil || u.Scheme != "https" || u.Host == "" {
			if err != nil || !(u.Scheme == "http" && isLoopback(u)) {
				bad("jwks_uri", "jwks_uri %q must be an https URL", c.JWKSURI)
			}
		}
	}
	if len(c.RedirectURIs) == 0 && !urlClient {
		bad("redirect_uris", "at least one redirect URI is required")
	}
	for _, r := range c.RedirectURIs {
		if err := ValidateRedirectURI(r); err != nil {
			bad("redirect_uris", "%v", err)
		}
	}
	for _, s := range c.AllowedScopes {
		if !scope.Known(s) {
			bad("allowed_scopes", "unknown scope %q in allowed scopes", s)
		}
	}
	for _, s := range c.DefaultScopes {
		if !scope.Known(s) {
			bad("default_scopes", "unknown scope %q in default scopes", s)
		} else if !slices.Contains(c.AllowedScopes, s) {
			bad("default_scopes", "default scope %q is not in the allowed scopes", s)
		}
	}
	if len(c.GrantTypes) == 0 {
		bad("grant_types", "at least one grant type is required")
	}
	for _, g := range c.GrantTypes {
		if g != GrantAuthorizationCode && g != GrantRefreshToken {
			bad("grant_types", "grant type %q is not supported (authorization_code, refresh_token)", g)
		}
	}
	if len(c.GrantTypes) > 0 && !slices.Contains(c.GrantTypes, GrantAuthorizationCode) {
		bad("grant_types", "grant types must include authorization_code")
	}
	if err := CheckIDTokenAlg(c.IDTokenSignedResponseAlg); err != nil {
		bad("id_token_signed_response_alg", "%v", err)
	}
	if len(p) > 0 {
		return problem.Invalid(problem.CodeInvalidInput, "invalid client registration", p...)
	}
	return nil
}

// NormalizeName returns a client's name as it is stored: trimmed and in
// NFC (docs/reference.md §4); Validate refuses what the text rule refuses.
func NormalizeName(name string) string { return norm.NFC.String(strings.TrimSpace(name)) }

// IsURLID reports whether id is a URL (a client ID metadata document
// client) rather than a registered name, which cannot contain a colon.
func IsURLID(id string) bool { return strings.Contains(id, "://") }

// ValidateRedirectURI checks one redirect URI: absolute, https, http on a
// loopback host, or a private-use scheme (PrivateUse); no fragment, no
// wildcard.
func ValidateRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "http" && u.Scheme != "https" && PrivateUse(u) && !strings.ContainsAny(raw, "#*") && u.User == nil {
		return nil
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("redirect URI %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI %q must not have a fragment", raw)
	}
	if strings.Contains(raw, "*") {
		return fmt.Errorf("redirect URI %q must not contain a wildcard", raw)
	}
	if u.User != nil {
		return fmt.Errorf("redirect URI %q must not contain user information", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u) {
			return nil
		}
		return fmt.Errorf("redirect URI %q must use https (http only for a loopback host: localhost, 127.0.0.0/8 or [::1])", raw)
	}
	return fmt.Errorf("redirect URI %q must use https, http on a loopback host, or an app's own scheme in reverse-DNS form (com.example.app:/callback, cursor://anysphere.cursor-mcp/callback)", raw)
}

// PrivateUse reports whether u is a native app's private-use URI scheme
// redirect (RFC 8252 §7.1): a scheme of its own in reverse-DNS form, such
// as com.example.app:/oauth/callback, or a scheme without a dot whose
// authority is a dotted, reverse-DNS name, as Cursor's
// cursor://anysphere.cursor-mcp/oauth/callback. Schemes a browser or the
// system gives a meaning of their own (javascript, data, file, …) never
// are.
func PrivateUse(u *url.URL) bool {
	s := strings.ToLower(u.Scheme)
	if s == "" || reservedSchemes[s] || strings.HasPrefix(s, "web+") {
		return false
	}
	if strings.Contains(s, ".") {
		return !strings.HasPrefix(s, ".") && !strings.HasSuffix(s, ".") && !strings.Contains(s, "..")
	}
	h := u.Hostname()
	return strings.Contains(h, ".") && !strings.HasPrefix(h, ".") && !strings.HasSuffix(h, ".") && u.Port() == "" &&
		!strings.ContainsAny(h, "[]%") && net.ParseIP(h) == nil
}

// reservedSchemes have a meaning of their own in browsers or systems; a
// client cannot claim them as its private-use scheme.
var reservedSchemes = map[string]bool{
	"http": true, "https": true, "javascript": true, "data": true, "file": true, "blob": true, "about": true,
	"vbscript": true, "ftp": true, "ws": true, "wss": true, "mailto": true, "tel": true, "sms": true,
	"filesystem": true, "view-source": true, "chrome": true, "chrome-extension": true, "intent": true, "urn": true,
}

// ReturnTarget names where a redirect URI sends the person back, as the
// consent page shows it: its host for http(s), the scheme and host (or the
// scheme alone) for a private-use scheme.
func ReturnTarget(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return ""
	case u.Scheme == "http" || u.Scheme == "https":
		return u.Host
	case u.Host != "":
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}

// DynamicPrefix begins the id of every client registered through dynamic
// client registration (RFC 7591, internal/dcr); administrators cannot
// choose ids that begin with it.
const DynamicPrefix = "dcr-"

// IsDynamicID reports whether id is a dynamically registered client's.
func IsDynamicID(id string) bool { return strings.HasPrefix(id, DynamicPrefix) }

// IsLoopbackRedirect reports whether raw is an http redirect to a
// loopback host (internal/loopback): a program on the person's own computer.
func IsLoopbackRedirect(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && isLoopback(u)
}

// isLoopback reports whether u is an http URL on the person's own computer
// (internal/loopback's rule).
func isLoopback(u *url.URL) bool {
	return u.Scheme == "http" && loopback.Host(u.Hostname())
}

// MatchRedirect reports whether requested matches a registered redirect URI:
// exactly, or, for a loopback http URI, exactly except for the port
// (RFC 8252 §7.3).
func MatchRedirect(registered []string, requested string) bool {
	if requested == "" {
		return false
	}
	if slices.Contains(registered, requested) {
		return true
	}
	ru, err := url.Parse(requested)
	if err != nil || !isLoopback(ru) || ru.Fragment != "" || ru.User != nil {
		return false
	}
	for _, r := range registered {
		g, err := url.Parse(r)
		if err != nil || !isLoopback(g) || g.User != nil {
			continue
		}
		if g.Hostname() == ru.Hostname() && g.EscapedPath() == ru.EscapedPath() && g.RawQuery == ru.RawQuery {
			return true
		}
	}
	return false
}

// GenerateSecret returns a new client secret: 256 random bits, base64url.
func GenerateSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("clients: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

const hashPrefix = "hs256$"

// HashSecret returns the stored form of a client secret (see the package doc).
func HashSecret(secret string) (string, error) {
	if secret == "" {
		return "", errors.New("clients: empty secret")
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return hashPrefix + hex.EncodeToString(salt) + "$" + hex.EncodeToString(mac(salt, secret)), nil
}

func mac(salt []byte, secret string) []byte {
	h := hmac.New(sha256.New, salt)
	h.Write([]byte(secret))
	return h.Sum(nil)
}

// CompareSecret reports, in constant time, whether secret matches hash.
func CompareSecret(hash, secret string) bool {
	rest, ok := strings.CutPrefix(hash, hashPrefix)
	if !ok || secret == "" {
		return false
	}
	saltHex, sumHex, ok := strings.Cut(rest, "$")
	if !ok {
		return false
	}
	salt, err1 := hex.DecodeString(saltHex)
	want, err2 := hex.DecodeString(sumHex)
	if err1 != nil || err2 != nil || len(want) != sha256.Size {
		return false
	}
	return subtle.ConstantTimeCompare(mac(salt, secret), want) == 1
}
