package fositestore

import (
	"maps"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/openid"
	"github.com/ory/fosite/token/jwt"

	"github.com/linkslot/linkslot/internal/store"
)

// Session is the fosite session of every Linkslot grant: who (Subject, the
// account id), through which link, and since when.
type Session struct {
	Subject   string                         `json:"sub"`
	LinkID    string                         `json:"link_id"`
	ClientID  string                         `json:"client_id"`
	AuthTime  time.Time                      `json:"auth_time"`
	GrantedAt time.Time                      `json:"granted_at"` // start of the grant family
	ExpiresAt map[fosite.TokenType]time.Time `json:"expires_at"`
	IDClaims  *jwt.IDTokenClaims             `json:"id_claims,omitempty"`
	IDHeaders *jwt.Headers                   `json:"id_headers,omitempty"`
	Extra     map[string]any                 `json:"extra,omitempty"`
	// AccessIssuedAt is the iat of the access token being issued, set with
	// its exp by SetExpiresAt (see there).
	// A pointer, so that omitempty leaves it out while it is unset (the
	// stored request is encoded by segmentio/encoding/json, which does not
	// know omitzero).
	AccessIssuedAt *time.Time `json:"access_iat,omitempty"`
	// Clock is read when an access token's expiry is set (default
	// store.SystemClock; tests pin it). Not stored.
	Clock store.Clock `json:"-"`
}

// AccessTokenLifespan is an access token's lifetime, exactly (docs/reference.md §2:
// at most 15 minutes).
const AccessTokenLifespan = 15 * time.Minute

var (
	_ fosite.Session             = (*Session)(nil)
	_ openid.Session             = (*Session)(nil)
	_ oauth2.JWTSessionContainer = (*Session)(nil)
)

// NewSession returns an empty session, for fosite to hydrate.
func NewSession() *Session { return &Session{} }

// SetExpiresAt implements fosite.Session. fosite calls it for an access
// token just before issuing one, with now + lifespan rounded to the nearest
// second, and later takes the token's iat from the clock truncated to the
// second, so exp − iat would be 901 s about half the time. Instead both come
// from one reading of the clock here: iat is the whole second of issue and
// exp is iat + AccessTokenLifespan, exactly (GetJWTClaims hands iat on).
func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	if key == fosite.AccessToken {
		clock := s.Clock
		if clock == nil {
			clock = store.SystemClock
		}
		iat := clock().UTC().Truncate(time.Second)
		s.AccessIssuedAt = &iat
		exp = iat.Add(AccessTokenLifespan)
	}
	s.ExpiresAt[key] = exp
}

// GetExpiresAt implements fosite.Session.
func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time {
	if s.ExpiresAt == nil {
		return time.Time{}
	}
	return s.ExpiresAt[key]
}

// GetUsername implements fosite.Session.
func (s *Session) GetUsername() string { return s.Subject }

// GetSubject implements fosite.Session.
func (s *Session) GetSubject() string { return s.Subject }

// Clone implements fosite.Session (a deep copy).
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	if s.AccessIssuedAt != nil {
		iat := *s.AccessIssuedAt
		c.AccessIssuedAt = &iat
	}
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	c.Extra = maps.Clone(s.Extra)
	if s.IDClaims != nil {
		ic := *s.IDClaims
		ic.Extra = maps.Clone(s.IDClaims.Extra)
		ic.Audience = append([]string(nil), s.IDClaims.Audience...)
		c.IDClaims = &ic
	}
	if s.IDHeaders != nil {
		c.IDHeaders = &jwt.Headers{Extra: maps.Clone(s.IDHeaders.Extra)}
	}
	return &c
}

// IDTokenClaims implements openid.Session.
func (s *Session) IDTokenClaims() *jwt.IDTokenClaims {
	if s.IDClaims == nil {
		s.IDClaims = &jwt.IDTokenClaims{}
	}
	if s.IDClaims.Subject == "" {
		s.IDClaims.Subject = s.Subject
	}
	return s.IDClaims
}

// IDTokenHeaders implements openid.Session.
func (s *Session) IDTokenHeaders() *jwt.Headers {
	if s.IDHeaders == nil {
		s.IDHeaders = &jwt.Headers{Extra: map[string]any{}}
	}
	return s.IDHeaders
}

// AccessTokenType is the JWT "typ" of access tokens (RFC 9068).
const AccessTokenType = "at+jwt"

// GetJWTClaims implements oauth2.JWTSessionContainer: the RFC 9068 claims
// beyond those fosite adds (iss, aud, exp, iat, jti, scope).
func (s *Session) GetJWTClaims() jwt.JWTClaimsContainer {
	var iat time.Time // zero: fosite uses its clock
	if s.AccessIssuedAt != nil {
		iat = *s.AccessIssuedAt
	}
	return &jwt.JWTClaims{
		Subject:  s.Subject,
		IssuedAt: iat,
		Extra:    map[string]any{"client_id": s.ClientID, "link_id": s.LinkID},
	}
}

// GetJWTHeader implements oauth2.JWTSessionContainer.
func (s *Session) GetJWTHeader() *jwt.Headers {
	return &jwt.Headers{Extra: map[string]any{"typ": AccessTokenType}}
}
