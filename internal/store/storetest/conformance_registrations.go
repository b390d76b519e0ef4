package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// testClientRegistrations: a dynamic registration is stored beside its
// client, read back whole, refused twice, and goes with its client; the
// sweep deletes only registrations older than the cut-off that nobody
// linked, a bounded batch at a time.
func testClientRegistrations(t *testing.T, s store.Store) {
	reg := func(id string, at time.Time) store.ClientRegistration {
		c := store.Client{ID: id, Name: "Dynamic " + id, Public: true, RedirectURIs: []string{"cursor://anysphere.cursor-mcp/oauth/callback"},
			AllowedScopes: []string{"openid"}, GrantTypes: []string{"authorization_code"}, CreatedAt: at, UpdatedAt: at}
		r := store.ClientRegistration{ClientID: id, AccessTokenHash: store.HashSecret("rat-" + id),
			Metadata: []byte(`{"client_name":"Dynamic ` + id + `"}`), ClientAddr: "192.0.2.7", CreatedAt: at}
		must(t, s.InTx(ctx, func(tx store.Store) error {
			if err := tx.CreateClient(ctx, c); err != nil {
				return err
			}
			return tx.CreateClientRegistration(ctx, r)
		}))
		return r
	}
	want := reg("dcr-one", t0)
	got, err := s.GetClientRegistration(ctx, want.ClientID)
	must(t, err)
	if got.AccessTokenHash != want.AccessTokenHash || string(got.Metadata) != string(want.Metadata) ||
		got.ClientAddr != want.ClientAddr || !got.CreatedAt.Equal(store.UTC(t0)) {
		t.Fatalf("registration read back as %+v, want %+v", got, want)
	}
	if err := s.CreateClientRegistration(ctx, want); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second registration of one client: %v, want ErrAlreadyExists", err)
	}
	if _, err := s.GetClientRegistration(ctx, "dcr-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing registration: %v, want ErrNotFound", err)
	}
	must(t, s.DeleteClient(ctx, want.ClientID))
	if _, err := s.GetClientRegistration(ctx, want.ClientID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("registration outlived its client: %v", err)
	}

	// Sweep: three old and unlinked, one old and linked, one recent.
	for i := range 3 {
		reg(fmt.Sprintf("dcr-old-%d", i), t0.Add(time.Duration(i)*time.Minute))
	}
	reg("dcr-linked", t0)
	reg("dcr-recent", t0.Add(24*time.Hour))
	a := newAccount(t, s, "registrations@example.com")
	if _, err := s.UpsertLink(ctx, a.ID, "dcr-linked", []string{"openid"}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sw := sweeps(t, s)
	sweepBatches(t, "SweepUnusedRegistrations", 3, func(limit int) (int64, error) {
		return sw.SweepUnusedRegistrations(ctx, t0.Add(time.Hour), limit)
	})
	for i := range 3 {
		if _, err := s.GetClient(ctx, fmt.Sprintf("dcr-old-%d", i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unused registration %d survived the sweep: %v", i, err)
		}
	}
	for _, id := range []string{"dcr-linked", "dcr-recent"} {
		if _, err := s.GetClientRegistration(ctx, id); err != nil {
			t.Errorf("the sweep removed %s: %v", id, err)
		}
	}
}
