package business_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCredentialsChanges: owners add, edit and remove credentials, each
// change dated by the service's clock and audited with the lists before and
// after; a credential saved unchanged keeps its date and writes nothing;
// the others keep their dates; staff are refused as for a page that does
// not exist; a list that reached its bound refuses one more.
func TestCredentialsChanges(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		f := setup(t, s)
		ctx := context.Background()
		list := func() []store.Credential {
			t.Helper()
			cs, err := f.svc.Credentials(ctx, f.owner)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}
		lic := store.Credential{Kind: store.CredentialLicense, Name: "  Barbering license ", Issuer: "NY Department of State", ValidUntil: "2027-06-30"}
		ins := store.Credential{Kind: store.CredentialInsurance, Name: "Public liability insurance", Number: "PL-1"}

		// Staff: refused, nothing written.
		n := auditCount(t, s)
		if _, err := f.svc.Credentials(ctx, f.staff); !errors.Is(err, business.ErrNotFound) {
			t.Fatalf("staff list the credentials: %v", err)
		}
		if err := f.svc.AddCredential(ctx, f.staff, business.CredentialsVersion(nil), lic); !errors.Is(err, business.ErrNotFound) {
			t.Fatalf("staff add a credential: %v", err)
		}
		if auditCount(t, s) != n || len(list()) != 0 {
			t.Fatal("a refused change wrote something")
		}

		if err := f.svc.AddCredential(ctx, f.owner, business.CredentialsVersion(list()), lic); err != nil {
			t.Fatal(err)
		}
		f.clk.add(time.Hour)
		if err := f.svc.AddCredential(ctx, f.owner, business.CredentialsVersion(list()), ins); err != nil {
			t.Fatal(err)
		}
		cs := list()
		if len(cs) != 2 || cs[0].Name != "Barbering license" || !cs[0].UpdatedAt.Equal(start) || !cs[1].UpdatedAt.Equal(start.Add(time.Hour)) {
			t.Fatalf("after two adds: %+v", cs)
		}

		// Saved unchanged: nothing written, the date kept.
		n = auditCount(t, s)
		f.clk.add(time.Hour)
		if err := f.svc.UpdateCredential(ctx, f.owner, business.CredentialsVersion(cs), 1, lic); err != nil {
			t.Fatal(err)
		}
		if auditCount(t, s) != n || !list()[0].UpdatedAt.Equal(start) {
			t.Fatalf("an unchanged save wrote: %+v", list())
		}

		// Edited: that one dated now, the other kept.
		lic.ValidUntil = "2029-06-30"
		if err := f.svc.UpdateCredential(ctx, f.owner, business.CredentialsVersion(cs), 1, lic); err != nil {
			t.Fatal(err)
		}
		cs = list()
		if cs[0].ValidUntil != "2029-06-30" || !cs[0].UpdatedAt.Equal(start.Add(2*time.Hour)) || !cs[1].UpdatedAt.Equal(start.Add(time.Hour)) {
			t.Fatalf("after the edit: %+v", cs)
		}
		evs, err := s.ListAuditEvents(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var before, after []store.Credential
		if evs[0].Action != "business.credentials" || evs[0].ActorID != "acct_o" || json.Unmarshal(evs[0].Before, &before) != nil ||
			json.Unmarshal(evs[0].After, &after) != nil || before[0].ValidUntil != "2027-06-30" || after[0].ValidUntil != "2029-06-30" {
			t.Fatalf("audit event of the edit: %+v", evs[0])
		}

		// A position past the list: not found.
		if err := f.svc.RemoveCredential(ctx, f.owner, business.CredentialsVersion(cs), 3); !errors.Is(err, business.ErrNotFound) {
			t.Fatalf("remove the third of two: %v", err)
		}
		if err := f.svc.RemoveCredential(ctx, f.owner, business.CredentialsVersion(cs), 1); err != nil {
			t.Fatal(err)
		}
		if cs = list(); len(cs) != 1 || cs[0].Name != "Public liability insurance" {
			t.Fatalf("after the remove: %+v", cs)
		}

		// At the bound, one more is refused and nothing changes.
		full := make([]store.Credential, business.MaxCredentials)
		for i := range full {
			full[i] = ins
		}
		if err := s.ReplaceCredentials(ctx, f.cat.Business.ID, full); err != nil {
			t.Fatal(err)
		}
		n = auditCount(t, s)
		if err := f.svc.AddCredential(ctx, f.owner, business.CredentialsVersion(list()), lic); !errors.Is(err, business.ErrInvalid) {
			t.Fatalf("one past the bound: %v", err)
		}
		if len(list()) != business.MaxCredentials || auditCount(t, s) != n {
			t.Fatal("a refused add changed the list")
		}
	})
}
