package grant_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/linkslot/linkslot/internal/grant"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzVerify from fresh grants")

// fuzzKey is a fixed P-256 key so that the committed seed corpus holds
// grants that really verify.
func fuzzKey(t testing.TB) jose.JSONWebKey {
	t.Helper()
	d := make([]byte, 32)
	for i := range d {
		d[i] = byte(i + 1)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: priv, KeyID: "fuzz-k1", Algorithm: string(jose.ES256), Use: "sig"}
}

// FuzzVerify feeds arbitrary tokens to Verify: it must never panic, must
// answer only nil, ErrInvalidGrant or ErrExpiredGrant, and may accept only a
// token whose signed payload names the expected booking.
func FuzzVerify(f *testing.F) {
	ctx := context.Background()
	iss := grant.New(&staticKeys{keys: []jose.JSONWebKey{fuzzKey(f)}}, pinned(now))
	b := testBooking()
	want := expectFor(b, grant.ScopeReschedule)
	tok, err := iss.Issue(ctx, b)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tok)
	f.Add("")
	f.Add("..")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, token string) {
		err := iss.Verify(ctx, token, want)
		switch err { //nolint:errorlint // the API is these exact values
		case grant.ErrInvalidGrant, grant.ErrExpiredGrant:
			return
		case nil:
		default:
			t.Fatalf("unexpected error %v", err)
		}
		parts := strings.Split(token, ".")
		raw, derr := base64.RawURLEncoding.DecodeString(parts[1])
		var c struct {
			BookingID string `json:"bid"`
		}
		if derr != nil || json.Unmarshal(raw, &c) != nil || c.BookingID != b.ID {
			t.Fatalf("accepted a token not for %s: %q", b.ID, token)
		}
	})
}

// TestWriteFuzzCorpus regenerates the committed seed corpus (run with
// -update-corpus): a valid grant and variants of it.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/fuzz/FuzzVerify")
	}
	ctx := context.Background()
	iss := grant.New(&staticKeys{keys: []jose.JSONWebKey{fuzzKey(t)}}, pinned(now))
	b := testBooking()
	tok, err := iss.Issue(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	b2 := b
	b2.Version++
	tok2, _ := iss.Issue(ctx, b2)
	parts := strings.Split(tok, ".")
	seeds := map[string]string{
		"valid":          tok,
		"superseded":     tok2,
		"tampered":       resign(t, tok, func(m map[string]any) { m["bid"] = "bkg_2" }),
		"no-signature":   parts[0] + "." + parts[1] + ".",
		"alg-none":       base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"fuzz-k1","typ":"linkslot-grant+jwt"}`)) + "." + parts[1] + ".",
		"header-only":    parts[0],
		"json-serialize": `{"protected":"` + parts[0] + `","payload":"` + parts[1] + `","signature":"` + parts[2] + `"}`,
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzVerify")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\nstring(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
