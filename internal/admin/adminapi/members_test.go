package adminapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestMembersAPI: members added, listed and removed through
// /admin/api/businesses/{ref}/members, with the refusals' codes.
func TestMembersAPI(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		e := newEnv(t, s, adminapi.NewTokenAuth(adminToken))
		tok := withToken(adminToken)
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		if _, err := s.PutCatalog(ctx, booking.DemoCatalogs(now)[0]); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAccount(ctx, store.Account{ID: "acc_o", Email: "owner@example.com", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		path := "/admin/api/businesses/biz-brightcut-barbers/members"
		if code, m, raw := e.do("POST", path, "application/json", `{"email":"owner@example.com"}`, tok); code != http.StatusCreated ||
			m["member"].(map[string]any)["role"] != "owner" {
			t.Fatalf("add: %d %s", code, raw)
		}
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code                     string
		}{
			{"again", "POST", path, `{"email":"owner@example.com"}`, 409, "already_exists"},
			{"no account", "POST", path, `{"email":"ghost@example.com"}`, 404, "not_found"},
			{"no staff", "POST", path, `{"email":"owner@example.com","staff":"stf-nope"}`, 404, "not_found"},
			{"no business", "GET", "/admin/api/businesses/biz-nope/members", "", 404, "not_found"},
			{"remove non-member", "DELETE", path + "/ghost@example.com", "", 404, "not_found"},
		} {
			ctype := ""
			if tc.body != "" {
				ctype = "application/json"
			}
			if code, m, raw := e.do(tc.method, tc.path, ctype, tc.body, tok); code != tc.status || errCode(m) != tc.code {
				t.Errorf("%s: %d %s", tc.name, code, raw)
			}
		}
		code, m, raw := e.do("GET", path, "", "", tok)
		if ms, _ := m["members"].([]any); code != 200 || len(ms) != 1 {
			t.Fatalf("list: %d %s", code, raw)
		}
		if code, _, raw := e.do("DELETE", path+"/owner@example.com", "", "", tok); code != http.StatusNoContent {
			t.Fatalf("remove: %d %s", code, raw)
		}
		if ms, _ := s.ListBusinessMembers(ctx, mustBiz(t, s).ID); len(ms) != 0 {
			t.Fatalf("after remove: %+v", ms)
		}
	})
}

func mustBiz(t *testing.T, s store.Store) store.Business {
	t.Helper()
	b, err := s.GetBusiness(context.Background(), "biz-brightcut-barbers")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
