package tokencheck_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

const (
	issuer   = "https://auth.linkslot.test"
	resource = "https://rs.linkslot.test/mcp"
)

type claims struct {
	Iss      string   `json:"iss,omitempty"`
	Sub      string   `json:"sub,omitempty"`
	Aud      []string `json:"aud,omitempty"`
	Exp      int64    `json:"exp,omitempty"`
	Iat      int64    `json:"iat,omitempty"`
	JTI      string   `json:"jti,omitempty"`
	ClientID string   `json:"client_id,omitempty"`
	Scope    string   `json:"scope,omitempty"`
	LinkID   string   `json:"link_id,omitempty"`
}

// fixture is a real store with one account, client and link, a key the
// checker trusts and a clock the test holds.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	s       *sqlstore.Store
	now     time.Time
	key     *ecdsa.PrivateKey
	account store.Account
	client  store.Client
	link    store.Link
	checker *tokencheck.Checker
}

func newFixture(t *testing.T, linkScopes ...string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), s: sqltest.SQLite(t), now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	var err error
	if f.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	f.account = store.Account{ID: store.NewID("acct"), Email: "ada@example.com", PasswordHash: "unused", CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.s.CreateAccount(f.ctx, f.account); err != nil {
		t.Fatal(err)
	}
	f.client = store.Client{ID: "agent", Name: "Agent", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"},
		AllowedScopes: []string{"openid", "bookings:read", "bookings:write"}, GrantTypes: []string{"authorization_code"},
		CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.s.CreateClient(f.ctx, f.client); err != nil {
		t.Fatal(err)
	}
	if f.link, err = f.s.UpsertLink(f.ctx, f.account.ID, f.client.ID, linkScopes, f.now); err != nil {
		t.Fatal(err)
	}
	f.checker, err = tokencheck.New(f.ctx, tokencheck.Options{Issuer: issuer, Resource: resource, Links: f.s,
		KeySet: &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&f.key.PublicKey}}, Clock: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) claims() claims {
	return claims{Iss: issuer, Sub: f.account.ID, Aud: []string{resource}, Exp: f.now.Add(15 * time.Minute).Unix(),
		Iat: f.now.Unix(), JTI: store.NewID("jti"), ClientID: f.client.ID, Scope: "openid bookings:read bookings:write", LinkID: f.link.ID}
}

// sign signs c as a JWS of type typ with key and algorithm alg, and
// records its session (active unless told otherwise) as the authorization
// server would.
func (f *fixture) sign(c claims, typ string, alg jose.SignatureAlgorithm, key any, session *bool) string {
	f.t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	jws, err := signer.Sign(b)
	if err != nil {
		f.t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		f.t.Fatal(err)
	}
	if session != nil {
		ts := store.TokenSession{Kind: store.KindAccessToken, SignatureHash: store.HashSecret(raw[strings.LastIndexByte(raw, '.')+1:]),
			RequestID: store.NewID("req"), ClientID: c.ClientID, AccountID: c.Sub, LinkID: c.LinkID, Active: true,
			Request: []byte("{}"), ExpiresAt: f.now.Add(time.Hour), CreatedAt: f.now}
		if err := f.s.CreateTokenSession(f.ctx, ts); err != nil {
			f.t.Fatal(err)
		}
		if !*session {
			if err := f.s.DeactivateTokenSession(f.ctx, store.KindAccessToken, ts.SignatureHash); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	return raw
}

// TestVerify: every way a bearer token is refused, and what an accepted
// one speaks for. Every refusal is ErrInvalidToken; none reaches a tool.
func TestVerify(t *testing.T) {
	active, revoked := true, false
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hmacKey := []byte(strings.Repeat("h", 32))
	for _, tt := range []struct {
		name       string
		linkScopes []string
		edit       func(*claims)
		typ        string
		alg        jose.SignatureAlgorithm
		foreign    bool  // signed by a key the checker does not trust
		hmac       bool  // HS256
		session    *bool // nil: no session stored
		raw        string
		setup      func(*fixture)
		wantErr    string // substring of the refusal; "" accepts
		wantScopes string
	}{
		{name: "valid", session: &active, wantScopes: "openid bookings:read bookings:write"},
		{name: "typ application/at+jwt", typ: "application/at+jwt", session: &active, wantScopes: "openid bookings:read bookings:write"},
		{name: "typ JWT", typ: "JWT", session: &active, wantErr: "typ must be at+jwt"},
		{name: "HS256", hmac: true, session: &active, wantErr: "alg must be ES256"},
		{name: "foreign key", foreign: true, session: &active, wantErr: "signature"},
		{name: "not a JWS", raw: "not-a-token", wantErr: "not a compact JWS"},
		{name: "header not base64url", raw: "%%%.e30.sig", wantErr: "header is not base64url"},
		{name: "header not JSON", raw: base64.RawURLEncoding.EncodeToString([]byte("nope")) + ".e30.sig", wantErr: "header is not JSON"},
		{name: "another audience", edit: func(c *claims) { c.Aud = []string{"https://other.example/mcp"} }, session: &active, wantErr: "audience"},
		{name: "another issuer", edit: func(c *claims) { c.Iss = "https://evil.example" }, session: &active, wantErr: "different provider"},
		{name: "expired past the skew", edit: func(c *claims) { c.Exp = time.Date(2026, 3, 2, 9, 59, 50, 0, time.UTC).Unix() },
			session: &active, wantErr: "token expired"},
		{name: "expired within the skew", edit: func(c *claims) { c.Exp = time.Date(2026, 3, 2, 9, 59, 57, 0, time.UTC).Unix() },
			session: &active, wantScopes: "openid bookings:read bookings:write"},
		{name: "no link_id", edit: func(c *claims) { c.LinkID = "" }, session: &active, wantErr: "link_id are required"},
		{name: "unknown link", edit: func(c *claims) { c.LinkID = "link-nope" }, session: &active, wantErr: "unknown link"},
		{name: "another account's link", edit: func(c *claims) { c.Sub = "acct-other" }, session: &active, wantErr: "link does not match"},
		{name: "revoked link", session: &active, wantErr: "link is not active",
			setup: func(f *fixture) { must(t, f.s.RevokeLink(f.ctx, f.link.ID, f.now)) }},
		{name: "disabled client", session: &active, wantErr: "client is disabled", setup: func(f *fixture) {
			_, err := f.s.UpdateClient(f.ctx, f.client.ID, func(c store.Client) (store.Client, error) { c.Disabled = true; return c, nil })
			must(t, err)
		}},
		{name: "no session stored", wantErr: "unknown token"},
		{name: "session revoked", session: &revoked, wantErr: "token revoked"},
		{name: "narrowed to what the link grants", linkScopes: []string{"openid", "bookings:read"}, session: &active,
			wantScopes: "openid bookings:read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scopes := tt.linkScopes
			if scopes == nil {
				scopes = []string{"openid", "bookings:read", "bookings:write"}
			}
			f := newFixture(t, scopes...)
			raw := tt.raw
			if raw == "" {
				c := f.claims()
				if tt.edit != nil {
					tt.edit(&c)
				}
				typ, alg, key := tt.typ, jose.ES256, any(f.key)
				if typ == "" {
					typ = "at+jwt"
				}
				switch {
				case tt.foreign:
					key = other
				case tt.hmac:
					alg, key = jose.HS256, hmacKey
				}
				raw = f.sign(c, typ, alg, key, tt.session)
			}
			if tt.setup != nil {
				tt.setup(f)
			}
			id, err := f.checker.Verify(f.ctx, raw)
			if tt.wantErr != "" {
				if !errors.Is(err, tokencheck.ErrInvalidToken) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Verify = %+v, %v; want ErrInvalidToken with %q", id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if id.AccountID != f.account.ID || id.ClientID != f.client.ID || id.LinkID != f.link.ID || strings.Join(id.Scopes, " ") != tt.wantScopes {
				t.Fatalf("identity %+v, want scopes %q", id, tt.wantScopes)
			}
		})
	}
}

// TestVerifyUnavailable: a store that cannot answer is ErrUnavailable (the
// router answers 503), never an invalid token.
func TestVerifyUnavailable(t *testing.T) {
	f := newFixture(t, "openid", "bookings:read")
	active := true
	raw := f.sign(f.claims(), "at+jwt", jose.ES256, f.key, &active)
	f.s.Close()
	if _, err := f.checker.Verify(f.ctx, raw); !errors.Is(err, tokencheck.ErrUnavailable) || errors.Is(err, tokencheck.ErrInvalidToken) {
		t.Fatalf("Verify on a closed store: %v, want ErrUnavailable", err)
	}
}

func TestNewRefusesMissingOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    tokencheck.Options
		want string
	}{
		{"nothing", tokencheck.Options{}, "issuer is required; resource is required; link source is required"},
		{"no resource", tokencheck.Options{Issuer: issuer, Links: sqltest.SQLite(t)}, "resource is required"},
		{"no links", tokencheck.Options{Issuer: issuer, Resource: resource}, "link source is required"},
	} {
		if _, err := tokencheck.New(context.Background(), tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
