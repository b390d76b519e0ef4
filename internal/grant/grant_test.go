package grant_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/store"
)

// staticKeys is a KeySource over fixed keys: the first signs, all verify.
type staticKeys struct {
	keys []jose.JSONWebKey // private, newest first
}

var _ grant.KeySource = (*staticKeys)(nil)

func (k *staticKeys) SigningKey(context.Context) (jose.SigningKey, error) {
	return jose.SigningKey{Algorithm: jose.ES256, Key: k.keys[0]}, nil
}

func (k *staticKeys) VerificationKeys(context.Context) (*jose.JSONWebKeySet, error) {
	set := &jose.JSONWebKeySet{}
	for _, j := range k.keys {
		set.Keys = append(set.Keys, j.Public())
	}
	return set, nil
}

func newKey(t testing.TB, kid string) jose.JSONWebKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
}

var (
	now   = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	start = time.Date(2026, 12, 8, 15, 0, 0, 0, time.UTC)
)

func pinned(t time.Time) store.Clock { return func() time.Time { return t } }

func testBooking() store.Booking {
	return store.Booking{ID: "bkg_1", Reference: "LS-7Q2K9", BusinessID: "biz_1", LinkID: "lnk_1",
		Version: 3, StartsAt: start, EndsAt: start.Add(45 * time.Minute), Status: store.BookingConfirmed}
}

func expectFor(b store.Booking, scope string) grant.Expect {
	return grant.Expect{BookingID: b.ID, BusinessID: b.BusinessID, LinkID: b.LinkID, Version: b.Version, Scope: scope}
}

// resign replaces the payload of token, keeping its header and signature.
func resign(t *testing.T, token string, edit func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	parts[1] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

// forge signs payload claims of b with an arbitrary signer configuration.
func forge(t *testing.T, sk jose.SigningKey, opts *jose.SignerOptions, payload []byte) string {
	t.Helper()
	s, err := jose.NewSigner(sk, opts)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func payloadOf(t *testing.T, token string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestIssueVerify(t *testing.T) {
	ctx := context.Background()
	keys := &staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}
	iss := grant.New(keys, pinned(now))
	b := testBooking()
	tok, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{grant.ScopeReschedule, grant.ScopeCancel} {
		if err := iss.Verify(ctx, tok, expectFor(b, scope)); err != nil {
			t.Errorf("scope %s: %v", scope, err)
		}
	}
	// The header names the key and the type.
	jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Protected
	if h.KeyID != "k1" || h.ExtraHeaders[jose.HeaderType] != grant.Type || h.Algorithm != "ES256" {
		t.Errorf("header = %+v", h)
	}
	var c map[string]any
	if err := json.Unmarshal(payloadOf(t, tok), &c); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"bid": "bkg_1", "ref": "LS-7Q2K9", "biz": "biz_1", "lnk": "lnk_1", "ver": 3.0,
		"iat": float64(now.Unix()), "exp": float64(start.Unix())}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %v, want %v", k, c[k], v)
		}
	}
	if s, _ := c["scope"].([]any); len(s) != 2 || s[0] != grant.ScopeReschedule || s[1] != grant.ScopeCancel {
		t.Errorf("scope = %v", c["scope"])
	}
}

func TestIssueRefusesIncompleteBooking(t *testing.T) {
	iss := grant.New(&staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}, pinned(now))
	for name, edit := range map[string]func(*store.Booking){
		"no id":       func(b *store.Booking) { b.ID = "" },
		"no business": func(b *store.Booking) { b.BusinessID = "" },
		"no link":     func(b *store.Booking) { b.LinkID = "" },
		"no version":  func(b *store.Booking) { b.Version = 0 },
		"no start":    func(b *store.Booking) { b.StartsAt = time.Time{} },
	} {
		b := testBooking()
		edit(&b)
		if _, err := iss.Issue(context.Background(), b); err == nil {
			t.Errorf("%s: issued", name)
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	ctx := context.Background()
	k1 := newKey(t, "k1")
	keys := &staticKeys{keys: []jose.JSONWebKey{k1}}
	iss := grant.New(keys, pinned(now))
	b := testBooking()
	tok, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	good := expectFor(b, grant.ScopeReschedule)
	validPayload := payloadOf(t, tok)
	es256 := func(k jose.JSONWebKey) jose.SigningKey { return jose.SigningKey{Algorithm: jose.ES256, Key: k} }
	typed := (&jose.SignerOptions{}).WithType(grant.Type)

	// A stranger's key published under the same kid cannot sign grants.
	stranger := newKey(t, "k1")
	// An issuer whose key set no longer has k1.
	other := grant.New(&staticKeys{keys: []jose.JSONWebKey{newKey(t, "k2")}}, pinned(now))
	// alg "none", hand-built.
	hdrNone := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1","typ":"` + grant.Type + `"}`))
	none := hdrNone + "." + base64.RawURLEncoding.EncodeToString(validPayload) + "."
	// HS256 keyed with the public key's coordinates, a classic confusion.
	pubJSON, _ := json.Marshal(k1.Public())
	hs := forge(t, jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: pubJSON, KeyID: "k1"}}, typed, validPayload)
	// Same key, payload signed without the grant type header.
	untyped := forge(t, es256(k1), nil, validPayload)
	// Same key, JWK embedded in the header.
	embedded := forge(t, es256(k1), (&jose.SignerOptions{EmbedJWK: true}).WithType(grant.Type), validPayload)
	// Same key, garbage payload.
	garbage := forge(t, es256(k1), typed, []byte(`not json`))
	noExp := resign(t, tok, func(m map[string]any) { delete(m, "exp") })
	_ = noExp
	noExpSigned := func() string {
		m := map[string]any{}
		_ = json.Unmarshal(validPayload, &m)
		delete(m, "exp")
		raw, _ := json.Marshal(m)
		return forge(t, es256(k1), typed, raw)
	}()
	parts := strings.Split(tok, ".")
	badSig := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))

	cases := []struct {
		name  string
		iss   *grant.Issuer
		token string
		want  func(grant.Expect) grant.Expect
	}{
		{name: "empty", token: ""},
		{name: "not a JWS", token: "hello"},
		{name: "three empty parts", token: ".."},
		{name: "too long", token: strings.Repeat("a", 5000)},
		{name: "JSON serialization", token: `{"payload":"e30","signatures":[]}`},
		{name: "tampered booking id", token: resign(t, tok, func(m map[string]any) { m["bid"] = "bkg_2" })},
		{name: "tampered version", token: resign(t, tok, func(m map[string]any) { m["ver"] = 4 })},
		{name: "tampered exp", token: resign(t, tok, func(m map[string]any) { m["exp"] = start.Add(time.Hour).Unix() })},
		{name: "zeroed signature", token: badSig},
		{name: "truncated", token: tok[:len(tok)-5]},
		{name: "alg none", token: none},
		{name: "HS256", token: hs},
		{name: "no typ header", token: untyped},
		{name: "embedded jwk", token: embedded},
		{name: "garbage payload", token: garbage},
		{name: "no exp", token: noExpSigned},
		{name: "stranger key same kid", token: forge(t, es256(stranger), typed, validPayload)},
		{name: "unknown kid", iss: other, token: tok},
		{name: "wrong booking", token: tok, want: func(e grant.Expect) grant.Expect { e.BookingID = "bkg_2"; return e }},
		{name: "wrong business", token: tok, want: func(e grant.Expect) grant.Expect { e.BusinessID = "biz_2"; return e }},
		{name: "superseded version", token: tok, want: func(e grant.Expect) grant.Expect { e.Version = 4; return e }},
		{name: "older version expected", token: tok, want: func(e grant.Expect) grant.Expect { e.Version = 2; return e }},
		{name: "other link", token: tok, want: func(e grant.Expect) grant.Expect { e.LinkID = "lnk_2"; return e }},
		{name: "insufficient scope", token: tok, want: func(e grant.Expect) grant.Expect { e.Scope = "bookings:write"; return e }},
		{name: "no scope asked", token: tok, want: func(e grant.Expect) grant.Expect { e.Scope = ""; return e }},
		{name: "no booking expected", token: tok, want: func(e grant.Expect) grant.Expect { e.BookingID = ""; return e }},
		{name: "expired and wrong booking", iss: grant.New(keys, pinned(start.Add(time.Hour))), token: tok,
			want: func(e grant.Expect) grant.Expect { e.BookingID = "bkg_2"; return e }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := iss
			if tc.iss != nil {
				v = tc.iss
			}
			want := good
			if tc.want != nil {
				want = tc.want(want)
			}
			err := v.Verify(ctx, tc.token, want)
			if err != grant.ErrInvalidGrant { //nolint:errorlint // identity is the point: one value, never wrapped
				t.Fatalf("err = %v, want ErrInvalidGrant itself", err)
			}
			if err.Error() != grant.ErrInvalidGrant.Error() {
				t.Fatalf("message differs: %q", err.Error())
			}
			if strings.Contains(err.Error(), tc.token) && tc.token != "" {
				t.Fatal("message echoes the token")
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	keys := &staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}
	b := testBooking()
	tok, err := grant.New(keys, pinned(now)).Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Time
		want error
	}{
		{now, nil},
		{start.Add(-time.Second), nil},
		{start, grant.ErrExpiredGrant},
		{start.Add(time.Second), grant.ErrExpiredGrant},
		{start.Add(90 * 24 * time.Hour), grant.ErrExpiredGrant},
	} {
		err := grant.New(keys, pinned(tc.at)).Verify(ctx, tok, expectFor(b, grant.ScopeCancel))
		if err != tc.want { //nolint:errorlint
			t.Errorf("at %s: err = %v, want %v", tc.at, err, tc.want)
		}
	}
	if grant.ErrExpiredGrant.Error() == grant.ErrInvalidGrant.Error() {
		t.Error("expired and invalid must differ")
	}
}

// A grant for version n dies once the booking is at n+1, and the rotated
// grant for n+1 works.
func TestVersionBumpRotatesGrant(t *testing.T) {
	ctx := context.Background()
	iss := grant.New(&staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}, pinned(now))
	b := testBooking()
	old, _ := iss.Issue(ctx, b)
	b.Version++
	fresh, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := iss.Verify(ctx, old, expectFor(b, grant.ScopeCancel)); !errors.Is(err, grant.ErrInvalidGrant) {
		t.Errorf("old grant: %v", err)
	}
	if err := iss.Verify(ctx, fresh, expectFor(b, grant.ScopeCancel)); err != nil {
		t.Errorf("fresh grant: %v", err)
	}
}

func TestKeyRotationStaticKeys(t *testing.T) {
	ctx := context.Background()
	keys := &staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}
	iss := grant.New(keys, pinned(now))
	b := testBooking()
	old, _ := iss.Issue(ctx, b)
	keys.keys = append([]jose.JSONWebKey{newKey(t, "k2")}, keys.keys...)
	fresh, _ := iss.Issue(ctx, b)
	for name, tok := range map[string]string{"previous key": old, "current key": fresh} {
		if err := iss.Verify(ctx, tok, expectFor(b, grant.ScopeReschedule)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Once the previous key is no longer published, its grants die.
	keys.keys = keys.keys[:1]
	if err := iss.Verify(ctx, old, expectFor(b, grant.ScopeReschedule)); !errors.Is(err, grant.ErrInvalidGrant) {
		t.Errorf("unpublished key: %v", err)
	}
}

// A grant issued to another agent of the same person is bound to that
// agent's link.
func TestIssueFor(t *testing.T) {
	ctx := context.Background()
	iss := grant.New(&staticKeys{keys: []jose.JSONWebKey{newKey(t, "k1")}}, pinned(now))
	b := testBooking()
	tok, err := iss.IssueFor(ctx, b, "lnk_2")
	if err != nil {
		t.Fatal(err)
	}
	want := expectFor(b, grant.ScopeCancel)
	if err := iss.Verify(ctx, tok, want); !errors.Is(err, grant.ErrInvalidGrant) {
		t.Errorf("creating link: %v", err)
	}
	want.LinkID = "lnk_2"
	if err := iss.Verify(ctx, tok, want); err != nil {
		t.Errorf("requesting link: %v", err)
	}
}
