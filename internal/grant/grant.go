package grant

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
)

// Scopes a grant carries. Every grant carries both; Expect.Scope names the
// one the operation needs.
const (
	ScopeReschedule = "booking:reschedule"
	ScopeCancel     = "booking:cancel"
)

// Type is the JWS "typ" header of a grant, so that no other token signed by
// the same infrastructure can be passed off as one.
const Type = "linkslot-grant+jwt"

// maxTokenLen bounds what Verify parses; a real grant is about 500 bytes.
const maxTokenLen = 4096

var (
	// ErrInvalidGrant is the one answer for every grant that is not an
	// authentic, current grant for this booking, business, link and scope.
	// Verify returns this very value, so its message is byte-identical for
	// every cause.
	ErrInvalidGrant = problem.New(problem.CodeInvalidGrant, "this grant does not authorize this change; "+
		"fetch the booking with get_my_booking (or search_my_bookings) and use the grant it returns").WithField("grant")
	// ErrExpiredGrant answers an authentic grant, otherwise valid, whose
	// appointment has already started.
	ErrExpiredGrant = problem.New(problem.CodeExpiredGrant, "the appointment has already started, "+
		"so it can no longer be rescheduled or cancelled here; contact the business directly").WithField("grant")
)

// KeySource supplies the signing key and the published verification keys;
// internal/keys.Manager implements it.
type KeySource interface {
	// SigningKey returns the current key: Algorithm ES256 and Key a
	// jose.JSONWebKey holding the private key and its KeyID.
	SigningKey(ctx context.Context) (jose.SigningKey, error)
	// VerificationKeys returns every public key a live grant may be signed
	// with (the current key and those retired but still published).
	VerificationKeys(ctx context.Context) (*jose.JSONWebKeySet, error)
}

// Expect is what the caller knows the grant must be bound to: the booking as
// it is now, the link making the request and the scope the operation needs.
type Expect struct {
	BookingID  string
	BusinessID string
	LinkID     string
	// Version is the booking's current version; a grant for any other
	// version is superseded.
	Version int
	// Scope is ScopeReschedule or ScopeCancel.
	Scope string
}

// claims is the grant payload.
type claims struct {
	BookingID  string   `json:"bid"`
	Reference  string   `json:"ref"`
	BusinessID string   `json:"biz"`
	LinkID     string   `json:"lnk"`
	Version    int      `json:"ver"`
	Scope      []string `json:"scope"`
	IssuedAt   int64    `json:"iat"`
	Expiry     int64    `json:"exp"`
}

// Issuer signs and verifies grants.
type Issuer struct {
	keys  KeySource
	clock store.Clock
}

// New returns an Issuer signing with keys and reading time from clock.
func New(keys KeySource, clock store.Clock) *Issuer {
	if clock == nil {
		clock = store.SystemClock
	}
	return &Issuer{keys: keys, clock: clock}
}

// Issue returns the current grant of b for the link that made it
// (b.LinkID), valid until b starts. It is IssueFor(ctx, b, b.LinkID).
func (i *Issuer) Issue(ctx context.Context, b store.Booking) (string, error) {
	return i.IssueFor(ctx, b, b.LinkID)
}

// IssueFor returns the current grant of b for linkID, the link whose request
// the answer goes to. get_my_booking and search_my_bookings answer a
// person's bookings to any of the person's agents, and each must receive a
// grant bound to its own link, since Verify refuses a grant presented by
// another link.
func (i *Issuer) IssueFor(ctx context.Context, b store.Booking, linkID string) (string, error) {
	b.LinkID = linkID
	if b.ID == "" || b.BusinessID == "" || b.LinkID == "" || b.Version < 1 || b.StartsAt.IsZero() {
		return "", errors.New("grant: booking lacks id, business, link, version or start")
	}
	sk, err := i.keys.SigningKey(ctx)
	if err != nil {
		return "", fmt.Errorf("grant: signing key: %w", err)
	}
	if sk.Algorithm != jose.ES256 || keyID(sk.Key) == "" {
		return "", errors.New("grant: signing key must be ES256 with a key id")
	}
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType(Type))
	if err != nil {
		return "", fmt.Errorf("grant: signer: %w", err)
	}
	payload, err := json.Marshal(claims{
		BookingID: b.ID, Reference: b.Reference, BusinessID: b.BusinessID, LinkID: b.LinkID,
		Version: b.Version, Scope: []string{ScopeReschedule, ScopeCancel},
		IssuedAt: i.clock().Unix(), Expiry: b.StartsAt.Unix(),
	})
	if err != nil {
		return "", fmt.Errorf("grant: encode: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("grant: sign: %w", err)
	}
	return jws.CompactSerialize()
}

func keyID(k any) string {
	switch k := k.(type) {
	case jose.JSONWebKey:
		return k.KeyID
	case *jose.JSONWebKey:
		if k != nil {
			return k.KeyID
		}
	}
	return ""
}

// Verify checks that token is an authentic, current grant matching want. It
// answers nil, ErrInvalidGrant or ErrExpiredGrant, except when the
// verification keys cannot be loaded (a wrapped infrastructure error, never
// caused by the token).
//
// Verify does not check that the link is still active; the caller must, and
// must answer ErrInvalidGrant when it is not.
func (i *Issuer) Verify(ctx context.Context, token string, want Expect) error {
	if len(token) == 0 || len(token) > maxTokenLen {
		return ErrInvalidGrant
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return ErrInvalidGrant
	}
	h := jws.Signatures[0].Protected
	if h.KeyID == "" || h.JSONWebKey != nil || h.Algorithm != string(jose.ES256) || h.ExtraHeaders[jose.HeaderType] != Type {
		return ErrInvalidGrant
	}
	set, err := i.keys.VerificationKeys(ctx)
	if err != nil {
		return fmt.Errorf("grant: verification keys: %w", err)
	}
	pub := findKey(set, h.KeyID)
	if pub == nil {
		return ErrInvalidGrant
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		return ErrInvalidGrant
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return ErrInvalidGrant
	}
	if want.BookingID == "" || c.BookingID != want.BookingID ||
		c.BusinessID != want.BusinessID || c.LinkID != want.LinkID ||
		c.Version != want.Version || want.Scope == "" || !slices.Contains(c.Scope, want.Scope) || c.Expiry == 0 {
		return ErrInvalidGrant
	}
	if !i.clock().Before(time.Unix(c.Expiry, 0)) {
		return ErrExpiredGrant
	}
	return nil
}

// findKey returns the one P-256 public key published under kid, or nil.
func findKey(set *jose.JSONWebKeySet, kid string) *ecdsa.PublicKey {
	if set == nil {
		return nil
	}
	found := set.Key(kid)
	if len(found) != 1 {
		return nil
	}
	var pub *ecdsa.PublicKey
	switch k := found[0].Key.(type) {
	case *ecdsa.PublicKey:
		pub = k
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	default:
		return nil
	}
	if pub.Curve != elliptic.P256() {
		return nil
	}
	return pub
}
