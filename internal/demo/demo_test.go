package demo_test

import (
	"context"
	"strings"
	"testing"

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
		if first.AccountsCreated != 2 || !first.ClientCreated || first.Businesses != 1 {
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
		if len(accts) != 2 || len(clients) != 1 || len(biz) != 1 {
			t.Fatalf("after two loads: %d accounts, %d clients, %d businesses", len(accts), len(clients), len(biz))
		}
		admin, err := s.GetAccountByEmail(ctx, demo.AdminEmail)
		if err != nil || !admin.Admin {
			t.Fatalf("admin account: %+v, %v", admin, err)
		}
	})
}
