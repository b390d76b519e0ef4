package grant_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/grant"
	"github.com/linkslot/linkslot/internal/keys"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// The real key manager: a grant signed before a rotation still verifies, and
// grants issued after it carry the new kid.
func TestKeyRotationWithManager(t *testing.T) {
	ctx := context.Background()
	s := sqltest.SQLite(t)
	// Key order is by creation time, so the clock moves between the two
	// keys (with equal times the newest key would be ambiguous).
	at := now
	m := keys.NewManager(s, []byte("test secret, 32 bytes or more...."), "grant", func() time.Time { return at })
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	iss := grant.New(m, pinned(now))
	b := testBooking()
	old, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	at = at.Add(24 * time.Hour)
	newKid, err := m.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if kidOf(t, fresh) != newKid || kidOf(t, old) == newKid {
		t.Errorf("kids: old %s fresh %s new %s", kidOf(t, old), kidOf(t, fresh), newKid)
	}
	for name, tok := range map[string]string{"previous key": old, "current key": fresh} {
		if err := iss.Verify(ctx, tok, expectFor(b, grant.ScopeCancel)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if strings.Count(old, ".") != 2 {
		t.Error("not compact")
	}
}

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	return jws.Signatures[0].Protected.KeyID
}
