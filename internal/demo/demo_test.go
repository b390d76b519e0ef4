package demo_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

func TestLoadIsIdempotent(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		cat := store.Catalog{
			Business: store.Business{Reference: "biz-test", Name: "Test Salon", Category: store.CategoryAppointment,
				TimeZone: "Europe/London", AgentBooking: true, Currency: "GBP", SlotIntervalMinutes: 15, HorizonDays: 30},
			Services: []store.Service{{Reference: "svc-cut", Name: "Cut", DurationMinutes: 30, Currency: "GBP"}},
			Staff:    []store.Staff{{Reference: "stf-a", Name: "A", ServiceIDs: []string{"svc-cut"}}},
		}
		d := demo.Data{Password: "pw-for-demo", Hash: func(p string) (string, error) { return "hashed:" + p, nil },
			Catalogs: []store.Catalog{cat}}
		first, err := demo.Load(ctx, s, d)
		if err != nil {
			t.Fatal(err)
		}
		if first.AccountsCreated != 4 || !first.ClientCreated || first.Businesses != 1 {
			t.Fatalf("first load = %+v", first)
		}
		second, err := demo.Load(ctx, s, d)
		if err != nil {
			t.Fatal(err)
		}
		if second.AccountsCreated != 0 || second.ClientCreated || second.Businesses != 0 {
			t.Fatalf("second load created again: %+v", second)
		}
		accts, _ := s.ListAccounts(ctx)
		for _, a := range accts {
			// One account id prefix everywhere (identity and admin use acct_).
			if !strings.HasPrefix(a.ID, "acct_") {
				t.Errorf("account id %q, want the acct_ prefix", a.ID)
			}
		}
		clients, _ := s.ListClients(ctx)
		biz, _ := s.ListBusinesses(ctx)
		if len(accts) != 4 || len(clients) != 1 || len(biz) != 1 {
			t.Fatalf("after two loads: %d accounts, %d clients, %d businesses", len(accts), len(clients), len(biz))
		}
		admin, err := s.GetAccountByEmail(ctx, demo.AdminEmail)
		if err != nil || !admin.Admin {
			t.Fatalf("admin account: %+v, %v", admin, err)
		}
	})
}

// TestDemoClientRedirects: the demo client has the /callback redirects and
// the MCP Inspector's /oauth/callback ones (docs/reference.md §8); a demo
// client an earlier load created with only the first two gains the others,
// and one whose redirects an operator changed keeps them.
func TestDemoClientRedirects(t *testing.T) {
	want := []string{"http://127.0.0.1/callback", "http://localhost/callback",
		"http://127.0.0.1/oauth/callback", "http://localhost/oauth/callback"}
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		d := demo.Data{Password: "pw-for-demo", Hash: func(p string) (string, error) { return "hashed:" + p, nil }}
		redirects := func() []string {
			t.Helper()
			c, err := s.GetClient(ctx, demo.ClientID)
			if err != nil {
				t.Fatal(err)
			}
			return c.RedirectURIs
		}
		setRedirects := func(r ...string) {
			t.Helper()
			if _, err := s.UpdateClient(ctx, demo.ClientID, func(c store.Client) (store.Client, error) {
				c.RedirectURIs = r
				return c, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := demo.Load(ctx, s, d); err != nil {
			t.Fatal(err)
		}
		if got := redirects(); !slices.Equal(got, want) {
			t.Fatalf("new demo client redirects %q, want %q", got, want)
		}

		setRedirects(want[:2]...) // as the first demo data had it
		res, err := demo.Load(ctx, s, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := redirects(); !res.ClientUpdated || !slices.Equal(got, want) {
			t.Fatalf("earlier demo client after load: updated %v, redirects %q; want %q", res.ClientUpdated, got, want)
		}
		if res, err = demo.Load(ctx, s, d); err != nil || res.ClientUpdated {
			t.Fatalf("load of a current demo client: updated %v, %v", res.ClientUpdated, err)
		}

		setRedirects("http://127.0.0.1/callback") // an operator's choice
		if res, err = demo.Load(ctx, s, d); err != nil || res.ClientUpdated {
			t.Fatalf("load of a changed demo client: updated %v, %v", res.ClientUpdated, err)
		}
		if got := redirects(); !slices.Equal(got, []string{"http://127.0.0.1/callback"}) {
			t.Fatalf("the operator's redirects became %q", got)
		}
	})
}

// TestDemoMembers: owner@example.com owns the demo barber and
// staff@example.com works there as Dana, both verified, once however often
// Load runs (docs/reference.md §8).
func TestDemoMembers(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		d := demo.Data{Password: "pw-for-demo", Hash: func(p string) (string, error) { return "hashed:" + p, nil },
			Catalogs: booking.DemoCatalogs(now)[:1]}
		for range 2 {
			if _, err := demo.Load(ctx, s, d); err != nil {
				t.Fatal(err)
			}
		}
		b, err := s.GetBusiness(ctx, demo.MemberBusiness)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := s.ListBusinessMembers(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Email != demo.OwnerEmail || ms[0].Role != store.RoleOwner || ms[1].Email != demo.StaffEmail || ms[1].StaffID == "" {
			t.Fatalf("members = %+v", ms)
		}
		c, _ := s.LoadCatalogByID(ctx, b.ID)
		for _, st := range c.Staff {
			if st.ID == ms[1].StaffID && st.Reference != demo.MemberStaff {
				t.Fatalf("staff member tied to %s, want %s", st.Reference, demo.MemberStaff)
			}
		}
		for _, e := range []string{demo.OwnerEmail, demo.StaffEmail} {
			if a, err := s.GetAccountByEmail(ctx, e); err != nil || a.EmailVerifiedAt == nil || a.PasswordHash != "hashed:pw-for-demo" {
				t.Fatalf("%s: %+v %v", e, a, err)
			}
		}
	})
}
