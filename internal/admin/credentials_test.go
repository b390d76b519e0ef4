package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCredentials: a business's self-reported credentials come in with a
// catalog import, go out with its export and back unchanged, and are
// replaced by SetCredentials, audited; bad input names every problem and
// changes nothing (docs/reference.md "Bookings the business answers").
func TestCredentials(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		svc := newService(t, s)
		withCreds := strings.Replace(goodCatalog, "  - reference: ny-diner", `    credentials:
      - {kind: license, name: Barbering license, issuer: Lisbon City Council, valid_until: 2027-06-30}
  - reference: ny-diner`, 1)
		if _, err := run(t, svc, withCreds, "catalog", "import", "-"); err != nil {
			t.Fatal(err)
		}
		b, err := s.GetBusiness(ctx, "lisbon-cuts")
		if err != nil {
			t.Fatal(err)
		}
		cs, err := s.ListCredentials(ctx, b.ID)
		if err != nil || len(cs) != 1 || cs[0].Issuer != "Lisbon City Council" || cs[0].ValidUntil != "2027-06-30" {
			t.Fatalf("imported credentials: %+v %v", cs, err)
		}
		exported := mustRun(t, svc, "", "catalog", "export")
		if !strings.Contains(exported, "Barbering license") {
			t.Fatalf("export lacks the credentials:\n%s", exported)
		}
		if _, err := run(t, svc, exported, "catalog", "import", "-"); err != nil {
			t.Fatal(err)
		}
		again, _ := s.ListCredentials(ctx, b.ID)
		if len(again) != 1 || !again[0].UpdatedAt.Equal(cs[0].UpdatedAt) {
			t.Fatalf("re-import of the export: %+v, want the same with its date", again)
		}

		// Bad input: every problem, nothing changed, nothing audited.
		before := len(auditOf(t, s))
		err = svc.SetCredentials(ctx, admin.Actor{ID: "acct_owner"}, "lisbon-cuts", []store.Credential{
			{Kind: "diploma", Name: "X"}, {Kind: store.CredentialLicense}, {Kind: store.CredentialInsurance, Name: "I", ValidUntil: "soon"}})
		ps, ok := admin.ProblemsOf(err)
		if !ok || len(ps) != 3 || ps[0].Path != "credentials[0].kind" || ps[1].Path != "credentials[1].name" || ps[2].Path != "credentials[2].valid_until" {
			t.Fatalf("refused credentials: %v %+v", err, ps)
		}
		if now, _ := s.ListCredentials(ctx, b.ID); len(now) != 1 || len(auditOf(t, s)) != before {
			t.Fatal("a refused change wrote")
		}
		if err := svc.SetCredentials(ctx, admin.Actor{ID: "acct_owner"}, "nope", nil); !errors.Is(err, admin.ErrNotFound) {
			t.Fatalf("unknown business: %v", err)
		}

		// Replaced, audited with the lists before and after.
		if err := svc.SetCredentials(ctx, admin.Actor{ID: "acct_owner", RequestID: "req-creds"}, "lisbon-cuts", []store.Credential{
			{Kind: store.CredentialInsurance, Name: "Public liability insurance", Issuer: "Fidelidade"}}); err != nil {
			t.Fatal(err)
		}
		now, _ := s.ListCredentials(ctx, b.ID)
		if len(now) != 1 || now[0].Kind != store.CredentialInsurance {
			t.Fatalf("replaced: %+v", now)
		}
		events := auditOf(t, s)
		last := events[len(events)-1]
		if last.Action != "business.credentials" || last.Target != "lisbon-cuts" || last.ActorID != "acct_owner" ||
			!strings.Contains(string(last.Before), "Barbering license") || !strings.Contains(string(last.After), "Fidelidade") {
			t.Fatalf("audit: %+v", last)
		}
	})
}
